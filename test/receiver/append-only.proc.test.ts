import { readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { payload, send } from './helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * listen's file outputs grow by appending: a batch writes its own records, never the file again.
 * What a real `extract listen` process writes is read from the kernel's count of the bytes it
 * wrote (/proc/<pid>/io, wchar: every write(2) of the process, inbox and logs included), batch by
 * batch, while the CSV grows from one batch to sixteen.
 */

const BATCHES = 16;
const PER_BATCH = 10;

/** A document of about 20 KB of fields, the same fields each time (one header): its row outweighs what the inbox writes for it. */
const event = (n: number) =>
  payload({
    document_id: `doc_${n}`,
    metadata: { file_name: `inv-${n}.pdf`, mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
    data: {
      invoice_number: `INV-${n}`,
      total: n,
      note: `${n}`.padEnd(20_000, 'x'),
      customer: { name: 'ACME', email: null },
    },
  });

const written = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/io`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1]);
};

const rowsIn = (path: string): number => {
  try {
    return readCsvObjects(readFileSync(path, 'utf8')).length;
  } catch {
    return 0;
  }
};

describe('listen: outputs grow by appending (built CLI)', () => {
  for (const format of ['csv', 'jsonl'] as const) {
    it(`listen -o FILE.${format}: over ${BATCHES} batches the file keeps its inode, its earlier bytes, and a batch writes what it adds, not the file`, {
      timeout: 180_000,
    }, async ({ spawnCli }) => {
      const base = tempDir();
      const out = join(base, `records.${format}`);
      const args = ['listen', '--auth', 'none', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', out];
      const listen = spawnCli(args);
      const [, url] = await listen.waitFor(/^Listening on (\S+)$/m);
      const pid = listen.child.pid!;
      const count = (): number =>
        format === 'csv'
          ? rowsIn(out)
          : (() => {
              try {
                return readFileSync(out, 'utf8')
                  .split('\n')
                  .filter((l) => l !== '').length;
              } catch {
                return 0;
              }
            })();
      let before = '';
      let inode: number | undefined;
      const perBatch: Array<{ wrote: number; size: number }> = [];
      for (let b = 0; b < BATCHES; b++) {
        const start = written(pid);
        for (let i = 0; i < PER_BATCH; i++) expect((await send(url!, event(b * PER_BATCH + i))).status).toBe(200);
        await expect.poll(count, { timeout: 60_000 }).toBe((b + 1) * PER_BATCH);
        const text = readFileSync(out, 'utf8');
        const { ino, size } = statSync(out);
        // The earlier bytes stay as they were, in the same file.
        expect(text.startsWith(before)).toBe(true);
        if (inode !== undefined) expect(ino).toBe(inode);
        inode = ino;
        before = text;
        perBatch.push({ wrote: written(pid) - start, size });
      }
      listen.child.kill('SIGINT');
      expect((await listen.child).exitCode).toBe(0);
      const second = perBatch[1]!;
      const last = perBatch[BATCHES - 1]!;
      console.log(
        `listen -o .${format}: bytes written in batch 2 ${second.wrote} (file ${second.size}), in batch ${BATCHES} ${last.wrote} (file ${last.size})`,
      );
      // The file grew eightfold; a batch that rewrote it would write at least the file itself.
      expect(last.size).toBeGreaterThan(second.size * 7);
      expect(last.wrote).toBeLessThan(last.size / 2);
      expect(last.wrote).toBeLessThan(second.wrote * 2);
    });
  }

  it('listen -o FILE.csv after a crash cut its last row: the torn row is cut off and the document written again from the inbox', async ({
    spawnCli,
  }) => {
    const base = tempDir();
    const out = join(base, 'records.csv');
    const args = ['listen', '--auth', 'none', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', out];
    const first = spawnCli(args);
    const [, url] = await first.waitFor(/^Listening on (\S+)$/m);
    for (let n = 0; n < 3; n++) expect((await send(url!, event(n))).status).toBe(200);
    await expect.poll(() => rowsIn(out), { timeout: 60_000 }).toBe(3);
    first.child.kill('SIGKILL');
    await first.child;
    // As a write cut short leaves it: the last row stops inside its note.
    const whole = readFileSync(out, 'utf8');
    truncateSync(out, whole.length - 200);

    const second = spawnCli(args);
    await second.waitFor(/^Listening on (\S+)$/m);
    second.child.kill('SIGINT');
    expect((await second.child).exitCode).toBe(0);
    const rows = readCsvObjects(readFileSync(out, 'utf8'));
    expect(rows.map((r) => r.document_id)).toEqual(['doc_0', 'doc_1', 'doc_2']);
    expect(readFileSync(out, 'utf8')).toBe(whole);
  });
});
