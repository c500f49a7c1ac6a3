import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach } from 'vitest';

/** The built CLI (npm test builds dist/ first), run on the same Node as the tests. */
export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'extract.js');

/** An environment with nothing of the developer's: no API key, no base URL, no colours. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), NO_COLOR: '1', ...extra };
}

export function tempDir(prefix = 'extract-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

const children = new Set<ResultPromise>();
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
});

export type ServeProcess = { url: string; child: ResultPromise; stdout: () => string };

/** Starts `extract serve --port 0 ...` as a child process and waits for its start-up lines (the last is "Try: ..."). */
export async function spawnServe(args: string[], timeoutMs = 20_000): Promise<ServeProcess> {
  const child = execa(process.execPath, [CLI, 'serve', '--port', '0', '--listen-port', '0', ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    buffer: false,
  });
  children.add(child);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`extract serve did not start within ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on (\S+)/.exec(out);
      if (m && /^Try: /m.test(out)) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`extract serve exited (${r.exitCode}) before listening:\n${out}`));
    });
  });
  return { url, child, stdout: () => out };
}

export type CliProcess = {
  child: ResultPromise;
  /** Everything printed so far on stdout and stderr. */
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `pattern` in stdout + stderr, waiting up to `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
};

/**
 * Starts the built CLI with `args` as a long-running child (killed after the test), in a
 * clean environment plus `env`, and lets the test wait for lines it prints.
 */
export function spawnCli(args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): CliProcess {
  const child = execa(process.execPath, [CLI, ...args], {
    env: cleanEnv(options.env),
    extendEnv: false,
    reject: false,
    buffer: false,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  children.add(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const l of listeners) l();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    changed();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    changed();
  });
  let exited = false;
  void child.then(() => {
    exited = true;
    changed();
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(`${out}\n${err}`);
          if (m) {
            done();
            resolve(m);
          } else if (exited) {
            done();
            reject(new Error(`the CLI exited before printing ${pattern}:\n${out}\n${err}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the CLI did not print ${pattern} within ${timeoutMs} ms:\n${out}\n${err}`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
  };
}
