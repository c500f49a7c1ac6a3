/**
 * One of several processes racing for a journal's lock (test/journal/lock-race.proc.test.ts). Nothing
 * here is timed, so a loaded machine changes how long a race takes, never who wins it:
 * - it prints "ready", then asks for the lock when a line "go" arrives on stdin;
 * - it prints "won" or "lost: <message>", and a winner holds the lock until stdin ends, so a
 *   slow racer never finds it released and wins after the first (two winners, one at a time);
 * - with --slow-maker CONTINUE_FILE, its first exclusive write (the old code made the lock file
 *   that way, empty for a moment before its text was written) is held open and empty: it prints
 *   "making" and writes nothing until CONTINUE_FILE exists. That moment is microseconds long in
 *   a real run; held open, a test can let other runs look at the lock inside it.
 * usage: node lock-racer.ts JOURNAL [--slow-maker CONTINUE_FILE]
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { createInterface } from 'node:readline';
import { acquireLock } from '../../src/journal/lock.ts';

const [journal, mode, continueFile] = process.argv.slice(2);
if (!journal || (mode !== undefined && (mode !== '--slow-maker' || !continueFile)))
  throw new Error('usage: lock-racer.ts JOURNAL [--slow-maker CONTINUE_FILE]');

if (continueFile) holdFirstExclusiveWrite(continueFile);

const lines = createInterface({ input: process.stdin });
const next = lines[Symbol.asyncIterator]();
process.stdout.write('ready\n');
if ((await next.next()).value !== 'go') throw new Error('expected "go" on stdin');
try {
  const lock = await acquireLock(journal);
  process.stdout.write('won\n');
  // Held until the test has every racer's outcome: stdin ends.
  while (!(await next.next()).done) {}
  await lock.release();
} catch (err) {
  process.stdout.write(`lost: ${err instanceof Error ? err.message : String(err)}\n`);
}
process.exit(0);

/**
 * Wraps fs.writeFileSync (and the named export the lock module imported, through
 * syncBuiltinESMExports) so that the first write with flag 'wx' creates its file, says so, and
 * waits, synchronously as the real call is, until `continueFile` exists before writing.
 */
function holdFirstExclusiveWrite(continueFile: string): void {
  const fs = createRequire(import.meta.url)('node:fs') as typeof import('node:fs');
  const original = fs.writeFileSync;
  let held = false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  fs.writeFileSync = ((file: Parameters<typeof original>[0], data: string, options?: { flag?: string }) => {
    if (held || options?.flag !== 'wx' || typeof file !== 'string') return original(file, data, options as never);
    held = true;
    const fd = fs.openSync(file, 'wx', 0o600);
    fs.writeSync(1, 'making\n');
    while (!fs.existsSync(continueFile)) Atomics.wait(pause, 0, 0, 10);
    try {
      fs.writeSync(fd, data);
    } finally {
      fs.closeSync(fd);
    }
  }) as typeof original;
  syncBuiltinESMExports();
}
