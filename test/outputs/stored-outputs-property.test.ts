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

/**
 * A run holds each completed document's results as their JSON text until the outputs are
 * written (pipeline.ts: storedResults), not as the parsed tree. For any batch, every output
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

async function written(out: string, docs: Doc[], stored: boolean, explode?: string): Promise<Record<string, string>> {
  const cwd = tempDir('extract-stored-outputs-');
  const target = resolveOutput({ out, cwd });
  await writeOutputs(target, records(docs, stored), { cwd, explode, warn: () => {} });
  return tree(cwd);
}

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
});
