import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CSV_MAX_COLUMNS } from '../../src/receiver/index.ts';
import { cliStartMs } from '../helpers/baseline.ts';
import { spawnCli, tempDir } from '../helpers/cli.ts';
import { peakRssMb } from '../helpers/smtp.ts';
import { payload, send } from '../receiver/helpers.ts';

/**
 * Each acknowledgement's bound here: a sender's 10 s timeout, halved, on an idle machine; on a
 * busy one, 20 start-ups of the CLI measured in the test when that is longer. Quiet, the worst
 * acknowledgement is about 3 start-ups (904 ms against ~300 ms); at load 12-15 it was 12.4
 * (6,861 ms against 555 ms), since the burst is CPU and fsync while a start-up is mostly CPU.
 * The bug this guards took 12-18 s quiet (40-60 start-ups), or never answered.
 */
const ACK_BOUND_MS = 5_000;

/**
 * Issue 25, part 4: `listen -o file.csv` stays fast whatever the event's shape. 20 events with
 * 5,000 distinct null fields each (2 MB in all) were acknowledged in 12-18 s or not at all, and
 * made a 193 MB CSV: each is now answered within 2 s, the CSV keeps at most CSV_MAX_COLUMNS
 * columns (the rest are named in overflow.jsonl), and SIGTERM ends listen promptly.
 */

const wide = (n: number) =>
  payload({
    document_id: `doc_wide_${n}`,
    data: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f_${n}_${i}_${'x'.repeat(60)}`, null])),
  });

describe('hostile: wide events into listen -o x.csv', () => {
  it("20 events of 5,000 distinct null fields at once: each answered within a sender's timeout, CSV columns capped, SIGTERM prompt", {
    timeout: 180_000,
  }, async () => {
    const base = tempDir();
    const dataDir = join(base, 'inbox');
    const out = join(base, 'x.csv');
    const listen = spawnCli(['listen', '--auth', 'none', '--port', '0', '--data-dir', dataDir, '-o', out]);
    const [, url] = await listen.waitFor(/^Listening on (\S+)$/m);
    const startMs = await cliStartMs();
    const ackBoundMs = Math.max(ACK_BOUND_MS, 20 * startMs);
    const events = Array.from({ length: 20 }, (_, n) => wide(n));
    const bytes = events.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(bytes).toBeGreaterThan(2_000_000);
    // All 20 at once (issue 25: "acknowledges within its own budget regardless of width"):
    // each timed from its own start, each answered within 2 s.
    const burst = await Promise.all(
      events.map(async (e) => {
        const started = Date.now();
        const r = await send(url!, e);
        expect(r.status).toBe(200);
        return Date.now() - started;
      }),
    );
    console.log(`wide: burst of 20 acknowledged in ${Math.min(...burst)}-${Math.max(...burst)} ms`);
    // 2 s is the goal (180–904 ms measured on a quiet 2-core machine); the test allows 5 s, still
    // well inside a sender's usual 10 s timeout, or more when the CLI's start-up says the machine
    // is busy (speed itself is measured, not asserted).
    for (const ms of burst) expect(ms).toBeLessThan(ackBoundMs);
    // Then 5 more all at once, while the outputs of the first 20 are being written: the same bound.
    const again = await Promise.all(
      events.slice(0, 5).map(async (e) => {
        const started = Date.now();
        const r = await send(url!, { ...e, document_id: `${e.document_id}_again` });
        expect(r.status).toBe(200);
        return Date.now() - started;
      }),
    );
    console.log(`wide: burst of 5 more acknowledged in ${Math.max(...again)} ms at most`);
    for (const ms of again) expect(ms).toBeLessThan(ackBoundMs);
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
    const peak = peakRssMb(listen.child.pid!);
    console.log(`wide: listen peak RSS ${Math.round(peak)} MB, CSV ${csv.length} bytes`);
    expect(peak).toBeLessThan(800);
    // Stops promptly: within a few start-ups of the CLI.
    const stopping = Date.now();
    listen.child.kill('SIGTERM');
    await listen.child;
    expect(Date.now() - stopping).toBeLessThan(10 * startMs);
  });
});
