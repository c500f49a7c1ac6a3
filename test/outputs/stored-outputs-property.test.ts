import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Results, ResultValue } from '../../src/contract/index.ts';
import { completedRecord, errorRecord, type DocumentRecord } from '../../src/outputs/record.ts';
import { storedResults } from '../../src/outputs/stored-results.ts';
import { resolveOutput } from '../../src/outputs/target.ts';
import { writeOutputs } from '../../src/outputs/write.ts';
import { tempDir } from '../helpers/cli.ts';
import { createRecords, MemoryRecords, RecordSpool, type RecordStore } from '../../src/batch/records.ts';
import { reportChunks, reviewEntries, tallySummary, type ReportEntry } from '../../src/batch/summary.ts';

/**
 * A run holds each completed document's results as their JSON text until the outputs are
 * written (outputs/stored-results.ts), not as the parsed tree. For any batch, every output
 * format must come out byte for byte as it did from the results held in memory.
 */

const scalar: fc.Arbitrary<ResultValue> = fc.oneof(
  fc.string({ unit: fc.constantFrom('"', ',', '\n', 'a', '=', 'é', '\\', 'n', 'u', 'l', ' ') }),
  fc.string({ unit: 'grapheme' }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const key = fc.constantFrom('total', 'invoice_number', 'vendor', 'a.b', 'x y', 'line_items', 'null');
const row = fc.dictionary(fc.constantFrom('description', 'amount', 'qty'), scalar, { maxKeys: 3 });
const value: fc.Arbitrary<ResultValue> = fc.oneof(
  scalar,
  fc.dictionary(key, scalar, { maxKeys: 3 }),
  fc.array(row, { maxLength: 3 }),
);
const results: fc.Arbitrary<Results> = fc.dictionary(key, value, { maxKeys: 5 });

type Doc = { ok: boolean; results: Results; pages: number | null };
const doc: fc.Arbitrary<Doc> = fc.record({
  ok: fc.boolean(),
  results,
  pages: fc.option(fc.nat(30), { nil: null }),
});

function records(docs: Doc[], stored: boolean): DocumentRecord[] {
  return docs.map((d, i) => {
    const origin = { file: `in/${i % 3}/f${i}.pdf`, document_id: `doc_${i}`, route: 'inline' as const };
    if (!d.ok) return errorRecord(origin, `failed ${i}`);
    return completedRecord(origin, d.pages, stored ? storedResults(JSON.stringify(d.results)) : d.results);
  });
}

/** Every file under `dir`, by its path there, with its bytes. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = await readFile(path, 'utf8');
  }
  return out;
}

async function written(
  out: string,
  docs: Doc[] | Iterable<DocumentRecord>,
  stored: boolean,
  explode?: string,
): Promise<Record<string, string>> {
  const cwd = tempDir('extract-stored-outputs-');
  const target = resolveOutput({ out, cwd });
  const given = Array.isArray(docs) && docs.every(isDoc) ? records(docs, stored) : (docs as Iterable<DocumentRecord>);
  const warnings: string[] = [];
  await writeOutputs(target, given, { cwd, explode, warn: (m) => warnings.push(m) });
  return { ...(await tree(cwd)), warnings: warnings.join('\n') };
}

function isDoc(x: unknown): x is Doc {
  return typeof x === 'object' && x !== null && 'ok' in x;
}

const FORMATS = [
  ['out.jsonl', undefined],
  ['out.json', undefined],
  ['out.csv', undefined],
  ['out.csv', 'line_items'],
  ['out.csv', 'vendor'],
  ['out/', undefined],
] as const;

/**
 * A run's records as batch/records.ts keeps them: emitted in `order` (some twice: the last
 * wins), read back in input order, from `store`.
 */
function emitted(entries: ReportEntry[], order: number[], again: number[], store: RecordStore): Iterable<ReportEntry> {
  const keys = entries.map((_, i) => `key-${i}`);
  const run = createRecords(undefined, undefined, store);
  for (const i of order) {
    const entry = entries[i];
    if (entry !== undefined) run.emit(keys[i] ?? '', entry);
  }
  for (const i of again) {
    const entry = entries[i];
    if (entry !== undefined) run.update(keys[i] ?? '', { ...entry, moved_to: `done/${i}` });
  }
  return run.inOrder(keys);
}

const OUTCOMES = ['completed', 'failed', 'left', 'skipped', 'pending', 'planned'] as const;
const extras = fc.record({
  outcome: fc.constantFrom(...OUTCOMES),
  sha256: fc.option(fc.string({ unit: fc.constantFrom('0', 'a', 'f'), minLength: 64, maxLength: 64 }), { nil: null }),
  setAside: fc.boolean(),
  pages: fc.option(fc.nat(9), { nil: undefined }),
  name: fc.string({ unit: fc.constantFrom('a', '\t', '\n', 'é', '"', '\\', '\u2028', ' ') }),
});

describe('outputs from stored results', () => {
  it('JSON Lines, JSON, CSV (with and without --explode) and a directory: the same bytes as from results in memory', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(doc, { minLength: 1, maxLength: 6 }), async (docs) => {
        for (const [out, explode] of [
          ['out.jsonl', undefined],
          ['out.json', undefined],
          ['out.csv', undefined],
          ['out.csv', 'line_items'],
          ['out/', undefined],
        ] as const) {
          const fromMemory = await written(out, docs, false, explode);
          expect(Object.keys(fromMemory).length, out).toBeGreaterThan(0);
          expect(await written(out, docs, true, explode), `${out}${explode ? ` --explode ${explode}` : ''}`).toEqual(
            fromMemory,
          );
        }
      }),
      { numRuns: 60 },
    );
  });

  it('read back from the record spool (emitted in any order, some twice): the same outputs, report and review list as from memory', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(doc, extras), { minLength: 0, maxLength: 6 }).chain((batch) =>
          fc.tuple(
            fc.constant(batch),
            fc.shuffledSubarray(
              batch.map((_, i) => i),
              { minLength: batch.length, maxLength: batch.length },
            ),
            fc.subarray(batch.map((_, i) => i)),
            fc.boolean(),
          ),
        ),
        async ([batch, order, again, stored]) => {
          const base = records(
            batch.map(([d]) => d),
            stored,
          );
          const entries: ReportEntry[] = base.map((r, i) => {
            const x = batch[i]?.[1];
            return {
              ...r,
              file: `${r.file}${x?.name ?? ''}`,
              outcome: x?.outcome ?? 'completed',
              sha256: x?.sha256 ?? null,
              // Present but undefined too, as a dry run's file the engine cannot count.
              pages_estimate: x?.pages,
              ...(x?.setAside ? { set_aside: true as const } : {}),
            };
          });
          const spool = RecordSpool.open();
          if (spool === undefined) throw new Error('no record spool in the temp directory');
          const fromDisk = emitted(entries, order, again, spool);
          const fromMemory = emitted(entries, order, again, new MemoryRecords());
          for (const [out, explode] of FORMATS) {
            const label = `${out}${explode ? ` --explode ${explode}` : ''}`;
            expect(await written(out, fromDisk, false, explode), label).toEqual(
              await written(out, [...fromMemory], false, explode),
            );
          }
          const extra = {
            stoppedBy: null,
            message: null,
            elapsedMs: 5,
            dryRun: false,
            charges: { reserved: 1, refunded: 0, unknown: 0, recognised: 0 },
          };
          const summaryOnDisk = tallySummary(fromDisk, extra);
          const summaryInMemory = tallySummary([...fromMemory], extra);
          // The report streamed from disk, an entry at a time, is the text of the whole summary held in memory.
          expect([...reportChunks(summaryOnDisk)].join('')).toBe(`${JSON.stringify(summaryInMemory, null, 2)}\n`);
          expect(JSON.stringify([...reviewEntries(summaryOnDisk)])).toBe(JSON.stringify(summaryInMemory.needs_review));
          expect(summaryOnDisk).toEqual(summaryInMemory);
        },
      ),
      { numRuns: 60 },
    );
  });
});
