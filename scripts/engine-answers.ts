/**
 * The engine's answers, written out so that a change meant to make it faster can be shown to
 * change none: one JSON line per document and definition (page count, results, grounding,
 * notes, or the error), in a fixed order. Run it before and after the change and compare the
 * files byte for byte (`cmp`).
 *
 * Documents: every fixture of fixtures/manifest.json under its parser (scans go through OCR
 * unless --no-scans), every fixture invoice and the bench's four long PDFs (row 7) under the
 * built-in Invoices parser, and every invoice of the real corpus (when it is there) under the
 * built-in parser and the corpus's alias definition.
 *
 * usage: node scripts/engine-answers.ts OUT.jsonl [--no-scans] [--long-pages N]
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { longPdf } from '../bench/lib/pdfs.ts';
import { CORPUS_DIR, CORPUS_SETUPS, corpusAvailable } from '../fixtures/lib/corpus.ts';
import { FIXTURES_DIR, loadFixtures } from '../fixtures/lib/manifest.ts';
import type { FieldDefinition } from '../src/contract/index.ts';
import { INVOICE_FIELDS } from '../src/emulator/default-config.ts';
import { extractInProcess } from '../src/engine/extract.ts';
import { closeOcr } from '../src/engine/ocr.ts';
import { EngineError } from '../src/engine/types.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { 'no-scans': { type: 'boolean', default: false }, 'long-pages': { type: 'string', default: '300' } },
});
const [out] = positionals;
if (out === undefined) throw new Error('usage: node scripts/engine-answers.ts OUT.jsonl [--no-scans] [--long-pages N]');

const SCANS = new Set(['image/png', 'image/tiff', 'image/jpeg']);
const lines: string[] = [];

async function answer(name: string, setup: string, bytes: Uint8Array, mimeType: string, fields: FieldDefinition) {
  let line: unknown;
  try {
    line = { name, setup, ...(await extractInProcess({ bytes, mimeType, fields })) };
  } catch (e) {
    line = { name, setup, error: e instanceof EngineError ? `${e.code}: ${e.message}` : String(e) };
  }
  lines.push(JSON.stringify(line));
}

const { fields, fixtures } = loadFixtures();
for (const f of fixtures) {
  const scanned = SCANS.has(f.mime) || f.file.includes('image-only');
  if (values['no-scans'] && scanned) continue;
  await answer(f.file, 'manifest', f.bytes, f.mime, fields);
}
for (const file of readdirSync(join(FIXTURES_DIR, 'invoices'))
  .filter((f) => f.endsWith('.pdf'))
  .sort()) {
  const bytes = new Uint8Array(readFileSync(join(FIXTURES_DIR, 'invoices', file)));
  await answer(`invoices/${file}`, 'built-in', bytes, 'application/pdf', INVOICE_FIELDS);
}
const longPages = Number(values['long-pages']);
for (let i = 0; i < 4; i++) {
  await answer(
    `long-${i}`,
    'built-in',
    new Uint8Array(await longPdf(i + 1, longPages)),
    'application/pdf',
    INVOICE_FIELDS,
  );
}
if (corpusAvailable()) {
  for (const file of readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.pdf'))
    .sort()) {
    const bytes = new Uint8Array(readFileSync(join(CORPUS_DIR, file)));
    await answer(`corpus/${file}`, 'built-in', bytes, 'application/pdf', INVOICE_FIELDS);
    const aliases = CORPUS_SETUPS.find((s) => s.name === 'aliases');
    if (aliases) await answer(`corpus/${file}`, 'aliases', bytes, 'application/pdf', aliases.fields);
  }
}
await closeOcr();
writeFileSync(out, `${lines.join('\n')}\n`);
process.stderr.write(`${lines.length} answers written to ${out}\n`);
