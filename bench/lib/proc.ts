import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What one child process cost, as /usr/bin/time and our own clock saw it. */
export type Measured = {
  code: number;
  /** Wall time measured by the runner, in seconds. */
  wall: number;
  user: number;
  sys: number;
  /** Peak resident set size in MB (1 MB = 2^20 bytes). */
  maxRssMb: number;
  stdout: string;
  stderr: string;
};

export type RunOptions = { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number };

/**
 * Runs a command under `/usr/bin/time -f '%U %S %M'` (user s, sys s, peak RSS KB). The
 * figures are those of the command and of every child it waited for (xargs -> sh -> curl).
 */
export async function measure(command: string, args: readonly string[], options: RunOptions = {}): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-time-'));
  const out = join(dir, 'time.txt');
  try {
    const started = performance.now();
    const result = await run('/usr/bin/time', ['-f', '%U %S %M', '-o', out, command, ...args], options);
    const wall = (performance.now() - started) / 1000;
    const [user = Number.NaN, sys = Number.NaN, rssKb = Number.NaN] =
      readFileSync(out, 'utf8').trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
    return { ...result, wall, user, sys, maxRssMb: rssKb / 1024 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export type RunResult = { code: number; stdout: string; stderr: string };

/**
 * Runs a command to its end, collecting its output; kills it after timeoutMs (default 10 min).
 * Its standard input is a pipe (a CLI reading from a pipe or from /dev/null starts differently),
 * closed after `input`: closed after a quick command had already ended (the runner descheduled
 * on a loaded machine), that was EPIPE, unhandled, and it ended the whole bench run.
 */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    // A command that ends before reading all its input: what it did is its exit status, not EPIPE.
    child.stdin.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') child.emit('error', err);
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Fails loudly: a benchmark of a run that failed measures nothing. */
export function check(result: RunResult, what: string): void {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}\n${result.stderr.slice(-2000)}`);
}
