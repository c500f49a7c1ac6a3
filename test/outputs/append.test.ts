import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import { openAppender } from '../../src/outputs/append.ts';
import { completedRecord, errorRecord, resolveOutput, type DocumentRecord } from '../../src/outputs/index.ts';
import { tempDir } from '../helpers/cli.ts';

const done = (file: string, id: string, total: number): DocumentRecord =>
  completedRecord({ file, document_id: id, route: 'inline' }, 1, { invoice_number: id, total });
const failed = (file: string): DocumentRecord =>
  errorRecord({ file, document_id: null, route: 'inline' }, 'the document is unreadable');

function appender(cwd: string, out: string, formulaProtection?: boolean) {
  let stdout = '';
  const sink = new Writable({
    write: (c, _e, cb) => {
      stdout += String(c);
      cb();
    },
  });
  return {
    open: () =>
      openAppender(resolveOutput({ out, cwd }), {
        cwd,
        stdout: sink,
        base: join(cwd, 'in'),
        warn: () => {},
        formulaProtection,
      }),
    stdout: () => stdout,
  };
}

describe('outputs that grow (extract watch)', () => {
  it('JSON Lines: appended across restarts; a line torn by a crash is cut off (the journal writes it again); what the file holds is known', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'out.jsonl');
    const a = await appender(cwd, 'out.jsonl').open();
    await a.append([done('in/a.pdf', 'doc_a', 1)]);
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"file":"in/torn.pdf","docu`);
    const b = await appender(cwd, 'out.jsonl').open();
    expect(b.holds(done('in/a.pdf', 'doc_a', 1))).toBe(true);
    expect(b.holds(done('in/b.pdf', 'doc_b', 2))).toBe(false);
    await b.append([done('in/b.pdf', 'doc_b', 2)]);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ file: 'in/a.pdf' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ file: 'in/b.pdf', results: { total: 2 } });
    expect(lines.slice(2)).toEqual(['']);
  });

  it("CSV: a phone number gets a leading ' by default; --no-formula-protection (watch, listen) writes it as it is", async () => {
    const cwd = tempDir();
    const phone = (file: string) =>
      completedRecord({ file, document_id: file, route: 'inline' }, 1, { phone: '+1 555 0100', '=col': 'x' });
    const guarded = await appender(cwd, 'guarded.csv').open();
    await guarded.append([phone('in/a.pdf')]);
    // Failed before for the raw file: the appender had no way to turn protection off.
    const raw = await appender(cwd, 'raw.csv', false).open();
    await raw.append([phone('in/a.pdf')]);
    await (await appender(cwd, 'raw.csv', false).open()).append([phone('in/b.pdf')]);
    const guardedRows: string[][] = parse(readFileSync(join(cwd, 'guarded.csv'), 'utf8'));
    const rawRows: string[][] = parse(readFileSync(join(cwd, 'raw.csv'), 'utf8'));
    expect(guardedRows[0]?.slice(6)).toEqual(['phone', "'=col"]);
    expect(guardedRows[1]?.slice(6)).toEqual(["'+1 555 0100", 'x']);
    expect(rawRows[0]?.slice(6)).toEqual(['phone', '=col']);
    expect(rawRows.slice(1).map((r) => r.slice(6))).toEqual([
      ['+1 555 0100', 'x'],
      ['+1 555 0100', 'x'],
    ]);
  });

  it('CSV: one header across appends and restarts; a column first seen later is added, the rows before padded', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'out.csv');
    const a = await appender(cwd, 'out.csv').open();
    // A failure first: no results, so the header has the document columns only.
    await a.append([failed('in/bad.pdf')]);
    await a.append([done('in/a.pdf', 'doc_a', 1)]);
    const b = await appender(cwd, 'out.csv').open();
    expect(b.holds(done('in/a.pdf', 'doc_a', 1))).toBe(true);
    await b.append([done('in/b.pdf', 'doc_b', 2)]);
    const rows: string[][] = parse(readFileSync(path, 'utf8'));
    expect(rows[0]).toEqual([
      'file',
      'document_id',
      'status',
      'page_count',
      'error',
      'needs_review',
      'invoice_number',
      'total',
    ]);
    expect(rows.slice(1).map((r) => [r[0], r[7]])).toEqual([
      ['in/bad.pdf', ''],
      ['in/a.pdf', '1'],
      ['in/b.pdf', '2'],
    ]);
    expect(rows.slice(1).every((r) => r.length === 8)).toBe(true);
  });

  it('a folder: one JSON per document, mirrored below the watched folder', async () => {
    const cwd = tempDir();
    const a = await appender(cwd, 'results/').open();
    await a.append([done('in/sub/a.pdf', 'doc_a', 1)]);
    expect(JSON.parse(readFileSync(join(cwd, 'results', 'sub', 'a.pdf.json'), 'utf8'))).toMatchObject({
      file: 'in/sub/a.pdf',
    });
    expect(a.holds(done('in/sub/a.pdf', 'doc_a', 1))).toBe(true);
  });

  it('stdout: JSON Lines as documents complete', async () => {
    const cwd = tempDir();
    const out = appender(cwd, '-');
    const a = await out.open();
    await a.append([done('in/a.pdf', 'doc_a', 1)]);
    await a.append([done('in/b.pdf', 'doc_b', 2)]);
    expect(
      out
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).file),
    ).toEqual(['in/a.pdf', 'in/b.pdf']);
  });

  it('a JSON array cannot grow: refused with what to use instead', async () => {
    const cwd = tempDir();
    const err = await appender(cwd, 'out.json')
      .open()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExtractError);
    expect(err).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/cannot grow.*FILE\.jsonl, FILE\.csv or DIR\//),
    });
  });

  it('a CSV of other columns is no place for records: refused (exit 2) with what to do, the file as it was', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'people.csv');
    writeFileSync(path, 'name,email\nAda,ada@example.com\n');
    const err = await appender(cwd, 'people.csv')
      .open()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/holds a CSV of other columns.*name a new file, or move this one away/),
    });
    expect(readFileSync(path, 'utf8')).toBe('name,email\nAda,ada@example.com\n');
  });

  it('a capped CSV: columns past the cap are left out of every row and named per document', async () => {
    const cwd = tempDir();
    const path = join(cwd, 'out.csv');
    const { openCsvFile } = await import('../../src/outputs/append-csv.ts');
    const add = async (text: string) => writeFileSync(path, readFileSync(path, 'utf8') + text);
    writeFileSync(path, '');
    // The six document columns and one field: the seventh column is the last there is room for.
    const csv = await openCsvFile(path, '', add, 7);
    expect((await csv.append([done('in/a.pdf', 'doc_a', 1)], undefined, () => {})).leftOut).toEqual([
      { document_id: 'doc_a', columns: ['total'] },
    ]);
    const rows: string[][] = parse(readFileSync(path, 'utf8'));
    expect(rows[0]).toHaveLength(7);
  });
});
