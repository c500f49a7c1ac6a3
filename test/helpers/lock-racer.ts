/**
 * One of several processes racing for a journal's lock (test/journal/lock-race.test.ts): waits
 * until the start time given, so that all ask at once, then holds the lock it got for a while.
 * Prints "won" or "lost: <message>". usage: node lock-racer.ts JOURNAL START_MS HOLD_MS
 */
import { acquireLock } from '../../src/journal/lock.ts';

const [journal, startText, holdText] = process.argv.slice(2);
if (!journal || !startText || !holdText) throw new Error('usage: lock-racer.ts JOURNAL START_MS HOLD_MS');
await new Promise((r) => setTimeout(r, Math.max(0, Number(startText) - Date.now())));
try {
  const lock = await acquireLock(journal);
  process.stdout.write('won\n');
  await new Promise((r) => setTimeout(r, Number(holdText)));
  await lock.release();
} catch (err) {
  process.stdout.write(`lost: ${err instanceof Error ? err.message : String(err)}\n`);
}
