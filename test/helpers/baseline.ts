import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { CLI, cleanEnv } from './cli.ts';

/**
 * A yardstick for a test that bounds how long a child process takes to do something: what the
 * built CLI takes, now, to start, print its help and exit (the median of three). Taken in the
 * same test, it is slow when the machine is loaded and fast when it is not, so a bound that is a
 * multiple of it holds a claim ("exits promptly") without assuming an idle machine.
 */
export async function cliStartMs(): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await execa(process.execPath, [CLI, '--help'], { env: cleanEnv(), extendEnv: false });
    runs.push(performance.now() - started);
  }
  return runs.sort((a, b) => a - b)[1]!;
}

/**
 * The same kind of yardstick for a fresh engine process: what a new Node takes, now, to load the
 * engine's worker entry (dist/engine/worker.js: pdfjs and the readers) and exit (the median of
 * three). Several times a CLI start: a bound that waits on a fresh engine process uses this.
 */
export async function engineStartMs(): Promise<number> {
  const worker = join(import.meta.dirname, '..', '..', 'dist', 'engine', 'worker.js');
  const load = `import(${JSON.stringify(pathToFileURL(worker).href)}).then(() => process.exit(0))`;
  const runs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    await execa(process.execPath, ['-e', load], { env: cleanEnv(), extendEnv: false });
    runs.push(performance.now() - started);
  }
  return runs.sort((a, b) => a - b)[1]!;
}
