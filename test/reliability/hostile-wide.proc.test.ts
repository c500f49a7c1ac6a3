import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { CSV_MAX_COLUMNS } from '../../src/receiver/index.ts';
import { tempDir } from '../helpers/cli.ts';
import { payload, send } from '../receiver/helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * `listen -o file.csv` stays fast whatever the event's shape. 20 events with
 * 5,000 distinct null fields each (2 MB in all) were acknowledged in 12-18 s or not at all, and
 * made a 193 MB CSV: each is now answered, the CSV keeps at most CSV_MAX_COLUMNS columns (the rest
 * are named in overflow.jsonl), and SIGTERM ends listen. How fast each is answered, and listen's
 * peak memory, are bench rows ("15 wide ack", bench/rows/bounds.ts), not assertions.
 */

const wide = (n: number) =>
  payload({
    document_id: `doc_wide_${n}`,
    data: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f_${n}_${i}_${'x'.repeat(60)}`, null])),
  });

describe('hostile: wide events into listen -o x.csv', () => {
  it('20 events of 5,000 distinct null fields at once: each acknowledged, CSV columns capped, SIGTERM ends it', {
    timeout: 180_000,
  }, async ({ spawnCli }) => {
    const base = tempDir();
    const dataDir = join(base, 'inbox');
    const out = join(base, 'x.csv');
    const listen = spawnCli(['listen', '--auth', 'none', '--port', '0', '--data-dir', dataDir, '-o', out]);
    const [, url] = await listen.waitFor(/^Listening on (\S+)$/m);
    const events = Array.from({ length: 20 }, (_, n) => wide(n));
    const bytes = events.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(bytes).toBeGreaterThan(2_000_000);
    // All 20 at once, each acknowledged (how fast is measured, not asserted: bench/).
    for (const r of await Promise.all(events.map((e) => send(url!, e)))) expect(r.status).toBe(200);
    // Then 5 more all at once, while the outputs of the first 20 are being written.
    const again = events.slice(0, 5).map((e) => send(url!, { ...e, document_id: `${e.document_id}_again` }));
    for (const r of await Promise.all(again)) expect(r.status).toBe(200);
    // The CSV is written after the acknowledgements: wait for the last document in it.
    const deadline = Date.now() + 60_000;
    let csv = '';
    while (Date.now() < deadline) {
      csv = await readFile(out, 'utf8').catch(() => '');
      if (csv.split('\n').filter((l) => l.includes('doc_wide_')).length === 25) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const header = csv.split('\n')[0]!.split(',');
    expect(header.length).toBeLessThanOrEqual(CSV_MAX_COLUMNS);
    expect(csv.split('\n').filter((l) => l.includes('doc_wide_')).length).toBe(25);
    expect(csv.length).toBeLessThan(5_000_000);
    // The columns left out are recorded, per document, in overflow.jsonl beside the inbox.
    // (rewritten just after the CSV: waited for as the CSV was)
    let overflow: string[] = [];
    while (Date.now() < deadline) {
      if ((await readdir(dataDir)).includes('overflow.jsonl'))
        overflow = (await readFile(join(dataDir, 'overflow.jsonl'), 'utf8')).trim().split('\n');
      if (overflow.length === 25) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // Every document but the first received has fields past the cap; the first has 5,000 - 494.
    // (Sent at once, they arrive in any order: the first is the CSV's first row.)
    expect(overflow).toHaveLength(25);
    const first = JSON.parse(overflow[0]!) as { document_id: string; csv_columns_left_out: string[] };
    expect(first.document_id).toBe(csv.split('\n')[1]!.split(',')[1]);
    expect(first.csv_columns_left_out).toHaveLength(5000 - (CSV_MAX_COLUMNS - 6));
    listen.child.kill('SIGTERM');
    expect((await listen.child).exitCode).toBe(0);
  });
});
