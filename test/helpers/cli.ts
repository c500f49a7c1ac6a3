import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { onTestFinished } from 'vitest';
import { afterEachFile, afterEachTest, inTest } from './cleanup.ts';

/** The built CLI (npm test builds dist/ first), run on the same Node as the tests. */
export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'extract.js');

/**
 * An environment with nothing of the developer's: no API key, no base URL, no colours, and a
 * state directory of the test's own (the default journal lives there, one per service: two
 * tests whose emulators happen to get the same port must not share it).
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    NO_COLOR: '1',
    ...(extra.XDG_STATE_HOME === undefined ? { XDG_STATE_HOME: tempDir('extract-state-') } : {}),
    ...extra,
  };
}

/** The state directory the CLI helpers give a run in `cwd`, so a test finds its default journal. */
export function stateHomeIn(cwd: string): string {
  return join(cwd, '.state');
}

/** Folders made outside a test (in beforeAll or at a file's top level): removed once the file is done. */
const fileDirs: string[] = [];
afterEachFile(() => {
  for (const dir of fileDirs.splice(0)) removeDir(dir);
});

function removeDir(dir: string): void {
  // Retries: a child killed just before may still be closing a file in it.
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * A fresh folder under the system's temp directory, removed when the test that made it
 * finishes (after the afterEach hooks, so after its children are killed), or, made outside a
 * test, when the file's tests are done.
 */
export function tempDir(prefix = 'extract-test-', parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  try {
    onTestFinished(() => removeDir(dir));
  } catch {
    // Not inside a test: onTestFinished throws, and the folder lives as long as the file.
    fileDirs.push(dir);
  }
  return dir;
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

const children = new Set<ResultPromise>();
/** Children started outside a test (a `serve` in beforeAll, shared by the file's tests). */
const fileChildren = new Set<ResultPromise>();
afterEachTest(() => killAll(children));
afterEachFile(() => killAll(fileChildren));

async function killAll(set: Set<ResultPromise>): Promise<void> {
  // Killed and awaited, so that none still writes into a folder about to be removed.
  const running = [...set];
  set.clear();
  for (const c of running) c.kill('SIGKILL');
  await Promise.allSettled(running);
}

export type ServeProcess = CliProcess & { url: string };

/**
 * Starts `extract serve --port 0 ...` as a child process and waits for its start-up lines
 * (the last is "Try: ..."). stdout and stderr stay apart, as for spawnCli.
 */
export async function spawnServe(args: string[], timeoutMs = 60_000): Promise<ServeProcess> {
  const serve = spawnCli(['serve', '--port', '0', '--listen-port', '0', ...args]);
  const url = (await serve.waitFor(/Listening on (\S+)/, timeoutMs))[1]!;
  await serve.waitFor(/^Try: /m, timeoutMs);
  return { ...serve, url };
}

export type CliProcess = {
  child: ResultPromise;
  /** Everything printed so far on stdout, on stderr, and on both in the order it came. */
  stdout: () => string;
  stderr: () => string;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout + stderr, waiting up to `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
};

/**
 * Starts the built CLI with `args` as a long-running child (killed after the test, or after the
 * file when started outside a test), in a clean environment plus `env`, and lets the test wait
 * for lines it prints.
 */
export function spawnCli(args: string[], options: SpawnOptions = {}): CliProcess {
  return spawnNode([CLI, ...args], options);
}

type SpawnOptions = { env?: Record<string, string>; cwd?: string };

/**
 * Starts a Node script (`args[0]`, then its arguments) as spawnCli starts the CLI: a clean
 * environment, killed after the test, its output waited on; its stdin is a pipe the test may
 * write to.
 */
export function spawnNode(args: string[], options: SpawnOptions = {}): CliProcess {
  const child = execa(process.execPath, args, {
    env: cleanEnv({
      ...(options.cwd !== undefined ? { XDG_STATE_HOME: stateHomeIn(options.cwd) } : {}),
      ...options.env,
    }),
    extendEnv: false,
    reject: false,
    buffer: false,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  (inTest() ? children : fileChildren).add(child);
  let out = '';
  let err = '';
  let both = '';
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const l of listeners) l();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    both += chunk.toString();
    changed();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    both += chunk.toString();
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
    output: () => both,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(both);
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
