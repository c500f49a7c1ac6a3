import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openGrowingFile } from '../../src/outputs/growing-file.ts';
import { tempDir } from '../helpers/cli.ts';

const HEADER = 'file,document_id,status,page_count,error,needs_review,total';

/** Writes `text`, opens it to grow, appends one record: the file's text after. */
async function grow(name: string, text: string, record: string): Promise<{ held: string; after: string }> {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  const { file, text: held } = await openGrowingFile(path, name.endsWith('.csv') ? 'csv' : 'jsonl');
  await file.append(record);
  return { held, after: readFileSync(path, 'utf8') };
}

describe('growing-file: the one rule for a torn last record (watch and listen)', () => {
  it('growing-file: JSON Lines: a torn last line is cut off; a whole one without its newline is kept and ended', async () => {
    const torn = await grow('a.jsonl', '{"document_id":"a"}\n{"document_id":"b', '{"document_id":"c"}\n');
    expect(torn.held).toBe('{"document_id":"a"}\n');
    expect(torn.after).toBe('{"document_id":"a"}\n{"document_id":"c"}\n');
    const whole = await grow('b.jsonl', '{"document_id":"a"}', '{"document_id":"c"}\n');
    expect(whole.after).toBe('{"document_id":"a"}\n{"document_id":"c"}\n');
  });

  it('growing-file: CSV: a row cut at a comma or inside a quoted cell that holds a newline is cut off, not the rows before', async () => {
    const rows = `${HEADER}\na.pdf,doc_a,completed,1,,false,1\n`;
    const atComma = await grow('a.csv', `${rows}b.pdf,doc_b,compl`, 'c.pdf,doc_c,completed,1,,false,3\n');
    expect(atComma.after).toBe(`${rows}c.pdf,doc_c,completed,1,,false,3\n`);
    const inQuotes = await grow('b.csv', `${rows}b.pdf,doc_b,completed,1,"line one\nline two`, 'c\n');
    expect(inQuotes.held).toBe(rows);
    // A quoted cell with a newline in a whole row is not a record boundary.
    const multiline = `${HEADER}\na.pdf,doc_a,completed,1,"x\ny",false,1`;
    expect((await grow('c.csv', multiline, 'c\n')).after).toBe(`${multiline}\nc\n`);
    // A header torn before its newline: the file was ours and held no row.
    expect((await grow('d.csv', 'file,document_id,sta', HEADER)).after).toBe(HEADER);
  });

  it('growing-file: a CSV that is not a CSV of records is left as it is (its writer refuses it), whatever its end', async () => {
    const path = join(tempDir(), 'people.csv');
    writeFileSync(path, 'name,email\nAda,ada@exa');
    const { text } = await openGrowingFile(path, 'csv');
    expect(text).toBe('name,email\nAda,ada@exa');
    expect(readFileSync(path, 'utf8')).toBe('name,email\nAda,ada@exa');
  });

  it('growing-file: an append adds bytes at the end of the same file, the earlier bytes as they were', async () => {
    const path = join(tempDir(), 'a.jsonl');
    writeFileSync(path, '{"document_id":"a"}\n');
    const { file } = await openGrowingFile(path, 'jsonl');
    const inode = statSync(path).ino;
    await file.append('{"document_id":"b"}\n');
    expect(statSync(path).ino).toBe(inode);
    expect(readFileSync(path, 'utf8')).toBe('{"document_id":"a"}\n{"document_id":"b"}\n');
  });
});
