import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InputFile } from '../../src/batch/discover.ts';
import { streamInputs } from '../../src/batch/discover/stream.ts';

/**
 * Discovery streams. A folder of 100,000 files walked a chunk at a time holds
 * its names while it is walked (one string each), never a file found: after a full collection,
 * the chunks already taken are gone (WeakRefs to them are empty). Reachability is counted, not
 * sampled: a loaded machine slows this test down but cannot change what it holds.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const FILES = 100_000;
let cwd: string;
beforeAll(() => {
  // A tmpfs when there is one: 100,000 files made and walked in a few seconds.
  cwd = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'discover-memory-'));
  mkdirSync(join(cwd, 'big'));
  for (let i = 0; i < FILES; i++) writeFileSync(join(cwd, 'big', `scan-${i}.pdf`), '');
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** Everything unreachable collected (a WeakRef keeps its target until the job that made it ends). */
async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

describe('discovery holds no file it has yielded', () => {
  it('a folder of 100,000 files: each chunk taken is collectable once the next is in hand', async () => {
    const { chunks, found } = streamInputs(['big'], { cwd, ignore: [], chunk: 1000 });
    const firsts: Array<WeakRef<InputFile>> = [];
    let count = 0;
    let collected = 0;
    for await (const chunk of chunks) {
      count += chunk.length;
      firsts.push(new WeakRef(chunk[0] as InputFile));
      if (firsts.length === 95) {
        await collectGarbage();
        // All but the chunk in hand (and the walk's own, not yet handed over).
        collected = firsts.filter((ref) => ref.deref() === undefined).length;
      }
    }
    expect(count).toBe(FILES);
    expect(found.files).toBe(FILES);
    expect(collected).toBe(94);
  });
});
