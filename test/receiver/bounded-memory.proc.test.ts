import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect } from 'vitest';
import type { WebhookPayload } from '../../src/contract/index.ts';
import { csvChunks } from '../../src/outputs/csv-writer.ts';
import { jsonLine } from '../../src/outputs/json.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { DocumentRecord } from '../../src/outputs/record-schema.ts';
import { CSV_MAX_COLUMNS } from '../../src/receiver/index.ts';
import { nullFields, recordOf } from '../../src/receiver/records.ts';
import { DEFAULT_MISSING_MARKER } from '../../src/outputs/missing-marker.ts';
import { tempDir } from '../helpers/cli.ts';
import { it, payload, send } from './helpers.ts';

/**
 * `extract listen` never holds a whole output. The worker takes events up to a byte
 * budget, not 500 at a time; CSV and JSON Lines are appended a page of the inbox at a time, and
 * review.jsonl is appended. What they hold is what the array-at-once writers (csvChunks, the
 * batch client's; jsonLine) write for the same records: the same rows and cells (a CSV that
 * grows puts a column first seen later at the right, where the batch puts it by its siblings).
 */

/** A record as the inbox gives it back (stored as JSON, parsed with the schema): what the old writers were fed. */
const stored = (p: WebhookPayload) =>
  DocumentRecord.parse(JSON.parse(JSON.stringify(recordOf(p, DEFAULT_MISSING_MARKER))));

/** The first event of each document_id, in the order sent: the documents an output holds. */
function firstOfEach(events: readonly WebhookPayload[]): WebhookPayload[] {
  const seen = new Set<string>();
  return events.filter((e) => !seen.has(e.document_id) && seen.add(e.document_id) !== undefined);
}

const leaf = fc.oneof(fc.constant(null), fc.string({ maxLength: 12 }), fc.integer(), fc.boolean());
const results = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 6 }),
  fc.oneof(leaf, fc.dictionary(fc.string({ minLength: 1, maxLength: 4 }), leaf, { maxKeys: 3 })),
  { maxKeys: 6 },
);
const events = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 14 }), results, fc.integer({ min: 0, max: 9 })), {
    minLength: 1,
    maxLength: 24,
  })
  .map((list) =>
    list.map(([id, data, wide]) =>
      payload({
        document_id: `doc_${id}`,
        metadata: { file_name: `f${id}.pdf`, mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
        // Now and then a document wide enough to pass the CSV's column cap: overflow.jsonl has lines too.
        data:
          wide === 0
            ? { ...data, ...Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`w${id}_${i}`, null])) }
            : data,
      }),
    ),
  );

describe('listen writes its outputs a page at a time, as the array writers did', () => {
  for (const format of ['csv', 'jsonl'] as const) {
    it(`${format}: random events, a 2 KB budget (many batches and pages) -> byte-identical output, review and overflow`, {
      timeout: 120_000,
    }, async ({ receiver }) => {
      await fc.assert(
        fc.asyncProperty(events, async (sent) => {
          const dir = tempDir();
          const out = join(dir, `out.${format}`);
          const r = await receiver({ out, batchBytes: 2048 });
          for (const e of sent) expect((await send(r.url, e)).status).toBe(200);
          await r.drained();
          const docs = firstOfEach(sent);
          const records = docs.map(stored);
          let leftOut: Array<{ document_id: string | null; columns: string[] }> = [];
          const written = await readFile(out, 'utf8');
          if (format === 'csv') {
            const expected = [
              ...csvChunks(records, { maxColumns: CSV_MAX_COLUMNS, onLeftOut: (l) => (leftOut = l) }),
            ].join('');
            expect(readCsvObjects(written)).toEqual(readCsvObjects(expected));
          } else expect(written).toBe(records.map(jsonLine).join(''));
          const review = docs
            .filter((d) => nullFields(d.data).length > 0)
            .map(
              (d) =>
                `${JSON.stringify({ document_id: d.document_id, file_name: d.metadata.file_name, null_fields: nullFields(d.data) })}\n`,
            )
            .join('');
          expect(await readFile(join(r.dataDir, 'review.jsonl'), 'utf8').catch(() => '')).toBe(review);
          if (format === 'csv') {
            const overflow = leftOut
              .map((l) => `${JSON.stringify({ document_id: l.document_id, csv_columns_left_out: l.columns })}\n`)
              .join('');
            expect(await readFile(join(r.dataDir, 'overflow.jsonl'), 'utf8').catch(() => '')).toBe(overflow);
          }
          await r.close();
        }),
        { numRuns: 8, seed: 25 },
      );
    });
  }

  it('80 MB of events held back then processed with a 1 MB budget: CSV complete and identical', {
    timeout: 240_000,
  }, async ({ spawnCli }) => {
    const base = tempDir();
    const out = join(base, 'big.csv');
    // The worker holds every event until listen is stopped (SIGTERM processes what it acknowledged
    // and held, then exits), so one pass meets all 80 at once, whatever time sending takes: no wait
    // on the clock. What that pass adds to listen's memory is bench row "15 listen mem"
    // (bench/rows/bounds.ts), measured there rather than asserted here.
    const listen = spawnCli(['listen', '--auth', 'none', '--port', '0', '--data-dir', join(base, 'inbox'), '-o', out], {
      env: { EXTRACT_LISTEN_BATCH_BYTES: String(1024 * 1024), EXTRACT_LISTEN_WORKER_DELAY_MS: String(3_600_000) },
    });
    const [, url] = await listen.waitFor(/^Listening on (\S+)$/m);
    const sent = Array.from({ length: 80 }, (_, n) =>
      payload({
        document_id: `doc_big_${n}`,
        metadata: { file_name: `big${n}.pdf`, mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
        data: { n, text: `${n}`.padEnd(1_000_000, 'x'), note: null },
      }),
    );
    for (const e of sent) expect((await send(url!, e)).status).toBe(200);
    // Else the worker began before every event was in, and one pass would not meet them all.
    expect(listen.output()).not.toMatch(/doc_big_/);
    // Not execa's kill, which sends SIGKILL 5 s later: processing 80 MB may take longer on a busy machine.
    process.kill(listen.child.pid!, 'SIGTERM');
    expect((await listen.child).exitCode, listen.output()).toBe(0);
    expect(listen.output()).toMatch(/doc_big_79 .*needs review/);
    const expected = [...csvChunks(sent.map(stored), { maxColumns: CSV_MAX_COLUMNS })].join('');
    const csv = await readFile(out, 'utf8');
    expect(csv === expected).toBe(true);
  });
});
