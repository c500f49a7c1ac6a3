import { existsSync, statSync } from 'node:fs';
import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { REVIEW_FILE } from '../../src/receiver/index.ts';
import { nullFields } from '../../src/receiver/records.ts';
import { tempDir } from '../helpers/cli.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { it, payload, send } from './helpers.ts';

/** A document with nulls at every depth: a leaf, a leaf of an Object field, and table cells. */
const withNulls = payload({
  document_id: 'doc_nulls',
  metadata: { file_name: 'scan.pdf', mime_type: 'application/pdf', source_type: 'email', page_count: 3 },
  data: {
    invoice_number: 'INV-7',
    total: null,
    paid: false,
    discount: 0,
    customer: { name: 'ACME', email: null },
    lines: [
      { description: 'Widget', amount: null },
      { description: null, amount: 0 },
    ],
  },
});
const complete = payload({
  document_id: 'doc_full',
  data: { invoice_number: 'INV-8', total: 12.5, customer: { name: 'B', email: 'b@x.io' } },
});

const lines = async (path: string): Promise<Record<string, unknown>[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

describe('listen: outputs', () => {
  it('nullFields: lists every null leaf by its path, tables cell by cell, and nothing else', () => {
    expect(nullFields(withNulls.data)).toEqual(['total', 'customer.email', 'lines[0].amount', 'lines[1].description']);
    expect(nullFields(complete.data)).toEqual([]);
    expect(nullFields({ customer: null, lines: [] })).toEqual(['customer']);
  });

  it('listen: documents with nulls are listed for review (log line and review.jsonl), and null is never 0 in JSON Lines', async ({
    receiver,
  }) => {
    const out = join(tempDir(), 'records.jsonl');
    const r = await receiver({ out });
    await send(r.url, withNulls);
    await send(r.url, complete);
    await send(r.url, withNulls);
    await r.drained();
    expect(r.lines).toEqual([
      '<-- doc_nulls parser=Invoices pages=3 new',
      '    doc_nulls (scan.pdf) needs review: null total, customer.email, lines[0].amount, lines[1].description',
      '<-- doc_full parser=Invoices pages=2 new',
      '<-- doc_nulls parser=Invoices pages=3 duplicate',
    ]);
    expect(await lines(join(r.dataDir, REVIEW_FILE))).toEqual([
      {
        document_id: 'doc_nulls',
        file_name: 'scan.pdf',
        null_fields: ['total', 'customer.email', 'lines[0].amount', 'lines[1].description'],
      },
    ]);
    const [first, second] = await lines(out);
    expect(first).toEqual({
      file: 'scan.pdf',
      document_id: 'doc_nulls',
      status: 'completed',
      page_count: 3,
      route: 'webhook',
      error: null,
      needs_review: true,
      results: withNulls.data,
    });
    expect(second).toMatchObject({ document_id: 'doc_full', needs_review: false, results: complete.data });
  });

  it("listen: CSV output grows by each batch's rows, the same file, its earlier bytes kept; null cells stay empty, never 0", async ({
    receiver,
  }) => {
    const out = join(tempDir(), 'records.csv');
    const r = await receiver({ out });
    await send(r.url, withNulls);
    await r.drained();
    const first = await readFile(out, 'utf8');
    const inode = statSync(out).ino;
    expect(readCsvObjects(first)).toHaveLength(1);
    await send(r.url, { ...complete, data: { ...withNulls.data, ...complete.data } });
    await r.drained();
    expect(statSync(out).ino).toBe(inode);
    expect((await readFile(out, 'utf8')).startsWith(first)).toBe(true);
    const rows = readCsvObjects(await readFile(out, 'utf8'));
    expect(rows.map((row) => row.document_id)).toEqual(['doc_nulls', 'doc_full']);
    const [nulls, full] = rows;
    expect(nulls).toMatchObject({
      file: 'scan.pdf',
      status: 'completed',
      page_count: '3',
      total: null,
      'customer.email': null,
      discount: '0',
      paid: 'false',
    });
    expect(full).toMatchObject({ total: '12.5', 'customer.email': 'b@x.io' });
    // The table travels as its JSON text, nulls inside kept as null.
    expect(JSON.parse(nulls?.lines ?? 'null')).toEqual(withNulls.data.lines);
  });

  it('listen: a JSON output is refused (an array cannot grow), directory output is one <document_id>.json each', async ({
    receiver,
  }) => {
    const base = tempDir();
    await expect(receiver({ out: join(base, 'records.json') })).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/cannot grow as documents arrive: use -o FILE\.jsonl, FILE\.csv or DIR\//),
    });
    expect(existsSync(join(base, 'records.json'))).toBe(false);

    const dir = await receiver({ out: `${join(base, 'docs')}/` });
    await send(dir.url, withNulls);
    await send(
      dir.url,
      payload({ document_id: '../escape', metadata: { ...withNulls.metadata, file_name: 'scan.pdf' } }),
    );
    await dir.drained();
    expect((await readdir(join(base, 'docs'))).sort()).toEqual(['%2E.%2Fescape.json', 'doc_nulls.json']);
    const doc: unknown = JSON.parse(await readFile(join(base, 'docs', 'doc_nulls.json'), 'utf8'));
    expect(doc).toMatchObject({ file: 'scan.pdf', results: { total: null } });
  });

  it('listen -o DIR/: distinct ids never share a file (inv/2024, inv_2024, inv:2024, ., .., long ids)', async ({
    receiver,
  }) => {
    const base = tempDir();
    const dir = await receiver({ out: `${join(base, 'docs')}/` });
    const long = 'x'.repeat(300);
    const ids = [
      'inv/2024',
      'inv_2024',
      'inv:2024',
      'inv%2F2024',
      '.',
      '..',
      '',
      `${long}a`,
      `${long}b`,
      'Rechnung März',
    ];
    for (const id of ids) {
      const r = await send(dir.url, payload({ document_id: id, data: { invoice_number: `for ${id}` } }));
      expect(r.status).toBe(200);
    }
    await dir.drained();
    const names = await readdir(join(base, 'docs'));
    expect(names).toHaveLength(ids.length);
    for (const name of names) expect(Buffer.byteLength(name)).toBeLessThanOrEqual(255);
    // Each file holds its own document: none was overwritten by another.
    const held = await Promise.all(
      names.map(
        async (n) => (JSON.parse(await readFile(join(base, 'docs', n), 'utf8')) as { document_id: string }).document_id,
      ),
    );
    expect(held.sort()).toEqual([...ids].sort());
    expect(names).toContain('inv%2F2024.json');
    expect(names).toContain('inv_2024.json');
    expect(names).toContain('inv%3A2024.json');
    expect(names).toContain('inv%252F2024.json');
    expect(names).toContain('%2E.json');
    expect(names).toContain('%2E..json');
  });

  it('listen: without -o, records are JSON Lines on stdout; a whole-file --format needs -o', async ({ receiver }) => {
    const r = await receiver();
    await send(r.url, withNulls);
    await r.drained();
    expect(
      r
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([expect.objectContaining({ document_id: 'doc_nulls', results: withNulls.data })]);
    await expect(receiver({ format: 'csv' })).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/pass -o FILE\.csv/),
    });
    await expect(receiver({ out: join(tempDir(), 'records.txt') })).rejects.toMatchObject({ code: 'usage' });
  });

  it('listen: on start a JSON Lines output gets what it misses, and a torn last line is cut off', async ({
    receiver,
  }) => {
    const base = tempDir();
    const out = join(base, 'records.jsonl');
    const dataDir = join(base, 'inbox');
    const first = await receiver({ out, dataDir });
    await send(first.url, withNulls);
    await send(first.url, complete);
    await first.drained();
    await first.close();
    // A crash mid-write left half a line; someone also removed the second record.
    const [kept] = (await readFile(out, 'utf8')).split('\n');
    await writeFile(out, `${kept}\n`);
    await appendFile(out, '{"file":"scan.pdf","document_id":"doc_');

    const second = await receiver({ out, dataDir });
    await second.drained();
    expect((await lines(out)).map((l) => l.document_id)).toEqual(['doc_nulls', 'doc_full']);
  });
});

describe("listen: the service's missing marker", () => {
  // The deployed service's webhooks carry "-" where a value could not be read, tables included.
  const dashed = payload({
    document_id: 'doc_dashed',
    metadata: { file_name: 'short.pdf', mime_type: 'application/pdf', source_type: 'email', page_count: 1 },
    data: {
      total: '-',
      number: '-5',
      ref: 'a-b',
      note: '--',
      customer: { name: 'ACME', email: '-' },
      lines: [{ description: '-', amount: 3 }],
    },
  });
  const cleared = {
    ...dashed.data,
    total: null,
    customer: { name: 'ACME', email: null },
    lines: [{ description: null, amount: 3 }],
  };

  it('listen: a value exactly "-" is null in the records and CSV, and listed for review; "-5", "a-b", "--" stay', async ({
    receiver,
  }) => {
    const dir = tempDir();
    const r = await receiver({ out: join(dir, 'records.jsonl') });
    await send(r.url, dashed);
    await r.drained();
    expect(r.lines).toContain(
      '    doc_dashed (short.pdf) needs review: null total, customer.email, lines[0].description',
    );
    expect(await lines(join(r.dataDir, REVIEW_FILE))).toEqual([
      {
        document_id: 'doc_dashed',
        file_name: 'short.pdf',
        null_fields: ['total', 'customer.email', 'lines[0].description'],
      },
    ]);
    const [record] = await lines(join(dir, 'records.jsonl'));
    expect(record).toMatchObject({ document_id: 'doc_dashed', needs_review: true, results: cleared });

    const csv = join(tempDir(), 'records.csv');
    const c = await receiver({ out: csv });
    await send(c.url, dashed);
    await c.drained();
    const [row] = readCsvObjects(await readFile(csv, 'utf8'));
    expect(row).toMatchObject({ needs_review: 'true', total: null, 'customer.email': null, ref: 'a-b' });
  });

  it('listen: with the marker off ("--no-missing-marker"), "-" is a value and nothing is listed', async ({
    receiver,
  }) => {
    const out = join(tempDir(), 'records.jsonl');
    const r = await receiver({ out, missingMarker: null });
    await send(r.url, dashed);
    await r.drained();
    const [record] = await lines(out);
    expect(record).toMatchObject({ needs_review: false, results: dashed.data });
    expect(r.lines.some((l) => l.includes('needs review'))).toBe(false);
  });
});

describe('listen: output failures', () => {
  it('listen: when the output cannot be written, the event stays in the inbox and is written on a later try', async ({
    receiver,
  }) => {
    const { mkdir, rm } = await import('node:fs/promises');
    const out = join(tempDir(), 'records.jsonl');
    const r = await receiver({ out });
    // The output path turns into a directory: appending fails with EISDIR.
    await mkdir(out);
    expect((await send(r.url, complete)).status).toBe(200);
    await r.waitForLine(
      /^error: could not write the outputs \(.*EISDIR.*\); retrying in 1 s, the events are safe in the inbox$/,
    );
    await rm(out, { recursive: true });
    await r.drained();
    expect((await lines(out)).map((l) => l.document_id)).toEqual(['doc_full']);
  });
});
