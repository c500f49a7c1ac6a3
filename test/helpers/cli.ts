import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { onTestFinished } from 'vitest';

/** The built CLI (npm test builds dist/ first), run on the same Node as the tests. */
export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'extract.js');

/**
 * An environment with nothing of the developer's: no API key, no base URL, no colours, and a
 * state directory of the test's own (the default journal lives there, one per service: two
 * tests whose emulators happen to get the same port must not share it).
 */
export function cleanEnv(extra: Record<string, string> = {}, folder: TempDir = tempDir): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    NO_COLOR: '1',
    ...(extra.XDG_STATE_HOME === undefined ? { XDG_STATE_HOME: folder('extract-state-') } : {}),
    ...extra,
  };
}

/** The state directory the CLI helpers give a run in `cwd`, so a test finds its default journal. */
export function stateHomeIn(cwd: string): string {
  return join(cwd, '.state');
}

function removeDir(dir: string): void {
  // Retries: a child killed just before may still be closing a file in it.
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

export type TempDir = (prefix?: string, parent?: string) => string;

/**
 * A fresh folder under the system's temp directory, removed when the test that made it
 * finishes (after its fixtures are torn down, so after its children are killed). Outside a test
 * (in `it.beforeAll`) a file's folders come from the `fileTempDir` fixture (./fixtures.ts).
 */
export function tempDir(prefix = 'extract-test-', parent = tmpdir()): string {
  const dir = mkdtempSync(join(parent, prefix));
  try {
    onTestFinished(() => removeDir(dir));
  } catch {
    // Not inside a test: onTestFinished throws, and nothing would remove the folder.
    removeDir(dir);
    throw new Error(
      'tempDir() is for a test: in it.beforeAll, take the fileTempDir fixture (test/helpers/fixtures.ts)',
    );
  }
  return dir;
}

/** Folders that live until `removeAll` (the `fileTempDir` fixture's, removed when the file is done). */
export function tempDirs(): { make: TempDir; removeAll: () => void } {
  const made: string[] = [];
  return {
    make: (prefix = 'extract-test-', parent = tmpdir()) => {
      const dir = mkdtempSync(join(parent, prefix));
      made.push(dir);
      return dir;
    },
    removeAll: () => {
      for (const dir of made.splice(0)) removeDir(dir);
    },
  };
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

/** Kills the children in `set` (a fixture's, when its test or file ends). */
export async function killAll(set: Set<ResultPromise>): Promise<void> {
  // Killed and awaited, so that none still writes into a folder about to be removed.
  const running = [...set];
  set.clear();
  for (const c of running) c.kill('SIGKILL');
  await Promise.allSettled(running);
}

export type ServeProcess = CliProcess & { url: string };

export type CliProcess = {
  child: ResultPromise;
  /** Everything printed so far on stdout, on stderr, and on both in the order it came. */
  stdout: () => string;
  stderr: () => string;
  output: () => string;
  /** Resolves with the first match of `pattern` in stdout + stderr, waiting up to `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
};

export type SpawnOptions = { env?: Record<string, string>; cwd?: string };
export type SpawnCli = (args: string[], options?: SpawnOptions) => CliProcess;
export type SpawnServe = (args: string[], timeoutMs?: number) => Promise<ServeProcess>;
export type SpawnNode = (args: string[], options?: SpawnOptions) => CliProcess;
export type Spawners = { spawnCli: SpawnCli; spawnServe: SpawnServe; spawnNode: SpawnNode };

/**
 * The built CLI and Node scripts as long-running children, each in a clean environment plus
 * `env`, added to `children` (the fixture that owns them kills them when its test or file ends:
 * the `spawnCli`, `spawnServe` and `spawnNode` fixtures of ./fixtures.ts); their state folders
 * come from `folder`.
 */
export function spawners(children: Set<ResultPromise>, folder: TempDir = tempDir): Spawners {
  /** Starts the built CLI with `args`, and lets the test wait for lines it prints. */
  const spawnCli: SpawnCli = (args, options = {}) => spawnNode([CLI, ...args], options);

  /**
   * Starts `extract serve --port 0 ...` and waits for its start-up lines (the last is
   * "Try: ..."). stdout and stderr stay apart, as for spawnCli.
   */
  const spawnServe: SpawnServe = async (args, timeoutMs = 60_000) => {
    const serve = spawnCli(['serve', '--port', '0', '--listen-port', '0', ...args]);
    const url = (await serve.waitFor(/Listening on (\S+)/, timeoutMs))[1]!;
    await serve.waitFor(/^Try: /m, timeoutMs);
    return { ...serve, url };
  };

  /** Starts a Node script (`args[0]`, then its arguments); its stdin is a pipe the test may write to. */
  const spawnNode: SpawnNode = (args, options = {}) => {
    const child = execa(process.execPath, args, {
      env: cleanEnv(
        {
          ...(options.cwd !== undefined ? { XDG_STATE_HOME: stateHomeIn(options.cwd) } : {}),
          ...options.env,
        },
        folder,
      ),
      extendEnv: false,
      reject: false,
      buffer: false,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    });
    children.add(child);
    return watched(child);
  };
  return { spawnCli, spawnServe, spawnNode };
}

/** A child whose output is kept, and waited on by `waitFor`. */
function watched(child: ResultPromise): CliProcess {
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
