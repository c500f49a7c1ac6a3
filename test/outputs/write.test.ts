import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { writeFileAtomic } from '../../src/outputs/atomic.ts';
import { DocumentRecord } from '../../src/outputs/record-schema.ts';
import { resolveOutput } from '../../src/outputs/target.ts';
import { writeOutputs } from '../../src/outputs/write.ts';
import { SAMPLE, readCsvObjects, useTempDirs, asWritten } from './helpers.ts';

const tempDir = useTempDirs();

async function listAll(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe('writeOutputs', () => {
  it("a run hands its report entries to the writers: every format writes only each record's own fields", async () => {
    const cwd = await tempDir();
    const entries = SAMPLE.map((r) => ({ ...r, outcome: 'skipped', sha256: 'report-only-f00d' }));
    for (const out of ['r.jsonl', 'r.json', 'r.csv', 'dir/']) {
      const written = await writeOutputs(resolveOutput({ out, cwd }), entries, { cwd });
      const paths = out.endsWith('/') ? written.written : [join(cwd, out)];
      expect(paths.length, out).toBeGreaterThan(0);
      for (const path of paths) {
        const text = await readFile(path, 'utf8');
        expect(text, `${out}: ${path}`).not.toMatch(/outcome|report-only-f00d/);
      }
    }
    // And what was written is the records themselves.
    const lines = (await readFile(join(cwd, 'r.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => DocumentRecord.parse(JSON.parse(l)))).toEqual(SAMPLE.map(asWritten));
  });

  it('output: a .json file keeps a value holding a line or paragraph separator (U+2028, U+2029) as it was', async () => {
    // JSON.stringify leaves these two raw, and a regular expression's ^ with the m flag matches after them:
    // indenting each line with one inserted spaces inside the value.
    const cwd = await tempDir();
    const records = SAMPLE.map((r, i) => ({ ...r, file: `a\u2028b\u2029c-${i}.pdf` }));
    await writeOutputs(resolveOutput({ out: 'r.json', cwd }), records, { cwd });
    const read = z.array(DocumentRecord).parse(JSON.parse(await readFile(join(cwd, 'r.json'), 'utf8')));
    expect(read.map((r) => r.file)).toEqual(records.map((r) => r.file));
  });

  it('output: a .json file is one JSON array of every record, in the order given', async () => {
    const cwd = await tempDir();
    const target = resolveOutput({ out: 'out/results.json', cwd });
    await writeOutputs(target, SAMPLE, { cwd });
    const parsed: unknown = JSON.parse(await readFile(join(cwd, 'out/results.json'), 'utf8'));
    expect(DocumentRecord.array().parse(parsed)).toEqual(SAMPLE.map(asWritten));
  });

  it('output: an empty run writes an empty JSON array', async () => {
    const cwd = await tempDir();
    await writeOutputs(resolveOutput({ out: 'r.json', cwd }), [], { cwd });
    expect(JSON.parse(await readFile(join(cwd, 'r.json'), 'utf8'))).toEqual([]);
  });

  it('output: .jsonl and .ndjson are one record per line, nulls kept', async () => {
    const cwd = await tempDir();
    for (const name of ['r.jsonl', 'r.ndjson']) {
      await writeOutputs(resolveOutput({ out: name, cwd }), SAMPLE, { cwd });
      const lines = (await readFile(join(cwd, name), 'utf8')).trimEnd().split('\n');
      expect(lines.map((l) => DocumentRecord.parse(JSON.parse(l)))).toEqual(SAMPLE.map(asWritten));
      expect(lines[1]).toContain('"total":null');
    }
  });

  it('output: records keep one key order whatever order they were built in', async () => {
    const cwd = await tempDir();
    const [first] = SAMPLE;
    if (first === undefined) throw new Error('no sample');
    const shuffled = {
      results: first.results,
      route: first.route,
      error: first.error,
      status: first.status,
      page_count: first.page_count,
      document_id: first.document_id,
      file: first.file,
    };
    await writeOutputs(resolveOutput({ out: 'r.jsonl', cwd }), [shuffled], { cwd });
    const line: unknown = JSON.parse(await readFile(join(cwd, 'r.jsonl'), 'utf8'));
    expect(Object.keys(z.record(z.string(), z.unknown()).parse(line))).toEqual([
      'file',
      'document_id',
      'status',
      'page_count',
      'route',
      'error',
      'needs_review',
      'results',
    ]);
  });

  it('output: a .csv file reads back to the records, explode included', async () => {
    const cwd = await tempDir();
    const warnings: string[] = [];
    await writeOutputs(resolveOutput({ out: 'r.csv', cwd }), SAMPLE, {
      cwd,
      explode: 'lines',
      warn: (w) => warnings.push(w),
    });
    const rows = readCsvObjects(await readFile(join(cwd, 'r.csv'), 'utf8'));
    expect(warnings).toEqual([]);
    expect(
      rows.map((r) => [r.file, r.document_id, r.page_count, r['customer.address.city'], r['lines.amount']]),
    ).toEqual([
      ['invoices/2024/a.pdf', 'doc_a', '2', 'Lyon', '10'],
      ['invoices/2024/a.pdf', 'doc_a', '2', 'Lyon', '-12.5'],
      ['invoices/2025/b.pdf', 'doc_b', '1', null, null],
      ['invoices/c.pdf', null, null, null, null],
    ]);
  });

  it('output: a directory gets one <name>.<ext>.json per document, mirroring the inputs below their common base', async () => {
    const cwd = await tempDir();
    const target = resolveOutput({ out: 'results/', cwd });
    const { written } = await writeOutputs(target, SAMPLE, { cwd });
    expect(await listAll(join(cwd, 'results'))).toEqual(['2024/a.pdf.json', '2025/b.pdf.json', 'c.pdf.json']);
    expect(written).toEqual([
      join(cwd, 'results/2024/a.pdf.json'),
      join(cwd, 'results/2025/b.pdf.json'),
      join(cwd, 'results/c.pdf.json'),
    ]);
    for (const [i, path] of written.entries()) {
      expect(DocumentRecord.parse(JSON.parse(await readFile(path, 'utf8')))).toEqual(asWritten(SAMPLE[i]!));
    }
  });

  it('output: an existing .csv keeps its columns: a night of failures writes the same header, a new field goes to the right', async () => {
    const cwd = await tempDir();
    const out = resolveOutput({ out: 'r.csv', cwd });
    await writeOutputs(out, SAMPLE.slice(0, 2), { cwd });
    const header = (text: string) => text.split('\n')[0]?.split(',');
    const first = header(await readFile(join(cwd, 'r.csv'), 'utf8'));
    // Only a failure: no results, so no field of its own.
    await writeOutputs(out, SAMPLE.slice(2), { cwd });
    const failures = await readFile(join(cwd, 'r.csv'), 'utf8');
    expect(header(failures)).toEqual(first);
    expect(readCsvObjects(failures)[0]).toMatchObject({ file: 'invoices/c.pdf', invoice_number: null });
    // A field the header lacks, beside one it has (customer.*): appended at the right, none moved.
    const grown = { ...SAMPLE[0]!, results: { ...SAMPLE[0]!.results, customer: { name: 'ACME', phone: '1' } } };
    await writeOutputs(out, [grown], { cwd });
    expect(header(await readFile(join(cwd, 'r.csv'), 'utf8'))).toEqual([...(first ?? []), 'customer.phone']);
  });

  it("output: formula protection writes '+1 555 as text a spreadsheet will not run; without it the value is written as it is", async () => {
    const cwd = await tempDir();
    const phone = { ...SAMPLE[0]!, results: { phone: '+1 555 0100', total: -12.5 } };
    await writeOutputs(resolveOutput({ out: 'on.csv', cwd }), [phone], { cwd });
    expect(readCsvObjects(await readFile(join(cwd, 'on.csv'), 'utf8'))[0]).toMatchObject({ phone: "'+1 555 0100" });
    await writeOutputs(resolveOutput({ out: 'off.csv', cwd }), [phone], { cwd, formulaProtection: false });
    expect(readCsvObjects(await readFile(join(cwd, 'off.csv'), 'utf8'))[0]).toMatchObject({
      phone: '+1 555 0100',
      total: '-12.5',
    });
  });

  it('output: csv or json to stdout is written once, at the end; streamed JSON Lines are not written again', async () => {
    const cwd = await tempDir();
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    await writeOutputs(resolveOutput({ out: '-', format: 'csv', cwd }), SAMPLE, { cwd, stdout });
    expect(readCsvObjects(text)).toHaveLength(3);
    text = '';
    const result = await writeOutputs(resolveOutput({ cwd }), SAMPLE, { cwd, stdout });
    expect(text).toBe('');
    expect(result.written).toEqual([]);
  });

  it('output: an existing file is replaced whole', async () => {
    const cwd = await tempDir();
    await writeFile(join(cwd, 'r.jsonl'), 'old\n'.repeat(1000));
    await writeOutputs(resolveOutput({ out: 'r.jsonl', cwd }), SAMPLE.slice(0, 1), { cwd });
    expect((await readFile(join(cwd, 'r.jsonl'), 'utf8')).split('\n')).toHaveLength(2);
  });
});

describe('writeFileAtomic', () => {
  it('atomic: a failure while writing leaves the old file intact and no temp file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'r.jsonl');
    await writeFile(path, 'previous run\n');
    function* failing(): Generator<string> {
      yield 'half of the new ';
      throw new Error('disk full');
    }
    await expect(writeFileAtomic(path, failing())).rejects.toThrow('disk full');
    expect(await readFile(path, 'utf8')).toBe('previous run\n');
    expect(await readdir(dir)).toEqual(['r.jsonl']);
  });

  it('atomic: a failure with no earlier file leaves no partial file and no temp file', async () => {
    const dir = await tempDir();
    async function* failing(): AsyncGenerator<string> {
      yield '[\n';
      throw new Error('interrupted');
    }
    await expect(writeFileAtomic(join(dir, 'r.json'), failing())).rejects.toThrow('interrupted');
    expect(await readdir(dir)).toEqual([]);
  });

  it('atomic: a rename that fails (target is a directory) leaves no temp file', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'r.csv'));
    await writeFile(join(dir, 'r.csv', 'keep'), 'x');
    await expect(writeFileAtomic(join(dir, 'r.csv'), ['a,b\n'])).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['r.csv']);
  });

  it('atomic: a directory that disappears is an error, not a partial file', async () => {
    const dir = await tempDir();
    await expect(writeFileAtomic(join(dir, 'gone', 'r.json'), ['[]'])).rejects.toThrow(/ENOENT/);
    expect(await readdir(dir)).toEqual([]);
  });
});
