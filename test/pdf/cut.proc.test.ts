import { execFileSync } from 'node:child_process';
import { open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import { ExtractError } from '../../src/errors.ts';
import { drawsTextOrImage } from '../../src/pdf/content.ts';
import { openPdf, PdfError } from '../../src/pdf/document.ts';
import { parsePasswords, passwordFileNote, readPasswordFile } from '../../src/pdf/passwords.ts';
import { pageParts, pagesLabel, parsePages, parseSplit, selectedPages } from '../../src/pdf/selection.ts';
import { pdfBytesAreEncrypted, pdfIsEncrypted } from '../../src/pdf/trailer.ts';
import { tempDir } from '../helpers/cli.ts';
import { drawnPdf, type PdfLock } from '../helpers/pdf.ts';
import { grayPng } from '../helpers/scan.ts';

/** Each page's text as pdfjs (the engine's reader) reads it; throws pdfjs's PasswordException on a locked file. */
async function pageTexts(bytes: Uint8Array, password?: string): Promise<string[]> {
  const task = getDocument({ data: new Uint8Array(bytes), verbosity: 0, ...(password ? { password } : {}) });
  const doc = await task.promise;
  const texts: string[] = [];
  for (let p = 1; p <= doc.numPages; p++) {
    const content = await (await doc.getPage(p)).getTextContent();
    texts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(''));
  }
  await task.destroy();
  return texts;
}

const FOUR = [{ lines: ['page one'] }, { lines: ['page two'] }, { lines: ['page three'] }, { lines: ['page four'] }];

describe('pdf: page selections (--pages) and splits (--split)', () => {
  it.each([
    ['1', 7, [1]],
    ['1-3,last', 7, [1, 2, 3, 7]],
    ['last', 7, [7]],
    ['5-', 7, [5, 6, 7]],
    ['2-last', 3, [2, 3]],
    ['3,1,2-3', 7, [1, 2, 3]],
    ['1-3', 2, [1, 2]],
    ['9', 2, []],
    [' 1 - 2 , 4', 7, [1, 2, 4]],
  ])('--pages %s of a %i-page file selects %j', (text, count, pages) => {
    expect(selectedPages(parsePages(text), count)).toEqual(pages);
  });

  it.each([
    ['0', 'is not a page'],
    ['', 'is not a page'],
    ['a-3', 'is not a page'],
    ['3-1', 'runs backwards: write 1-3'],
    ['last-2', 'starts at the last page'],
    ['1.5', 'is not a page'],
  ])('--pages "%s" is refused before anything is sent: %s', (text, words) => {
    const err = (() => {
      try {
        parsePages(text);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ExtractError);
    expect((err as ExtractError).code).toBe('usage');
    expect((err as ExtractError).message).toContain(words);
  });

  it('--split takes every:N and blank; anything else is a usage error naming both', () => {
    expect(parseSplit('every:2')).toEqual({ every: 2 });
    expect(parseSplit('blank')).toEqual({ blank: true });
    for (const bad of ['every:0', 'every', 'every:x', 'blanks', '2']) {
      expect(() => parseSplit(bad)).toThrow(/write every:N .* or blank/);
    }
  });

  it('a part is named by its pages in one form, whatever was written', () => {
    expect(pagesLabel([1, 2, 3, 7])).toBe('pages=1-3,7');
    expect(pagesLabel([4])).toBe('pages=4');
    expect(pagesLabel([1, 3, 5, 6])).toBe('pages=1,3,5-6');
    expect(pagesLabel(selectedPages(parsePages('1-3,last'), 7))).toBe(
      pagesLabel(selectedPages(parsePages('1,2,3,7'), 7)),
    );
  });

  it('every:N makes parts of N selected pages, the last shorter; blank splits at blank pages, which no part holds', () => {
    expect(pageParts([1, 2, 3, 4, 5], { every: 2 }).map((p) => p.label)).toEqual(['pages=1-2', 'pages=3-4', 'pages=5']);
    const blank = new Set([1, 3, 4, 7]);
    expect(pageParts([1, 2, 3, 4, 5, 6, 7, 8], { blank: true }, (p) => blank.has(p)).map((p) => p.label)).toEqual([
      'pages=2',
      'pages=5-6',
      'pages=8',
    ]);
    expect(pageParts([2, 5], undefined)).toEqual([{ pages: [2, 5], label: 'pages=2,5' }]);
    expect(pageParts([], undefined)).toEqual([]);
  });
});

describe('pdf: content operators (what --split blank reads)', () => {
  const draws = (text: string, xobjects: Record<string, boolean> = {}) =>
    drawsTextOrImage(Buffer.from(text, 'latin1'), (name) => xobjects[name] ?? false);

  it('text shown or an image painted draws; paths, fills, and operator names in strings or comments do not', () => {
    expect(draws('BT /F1 12 Tf 10 10 Td (hi) Tj ET')).toBe(true);
    expect(draws('BT [(a) -20 (b)] TJ ET')).toBe(true);
    expect(draws("BT (x) ' ET")).toBe(true);
    expect(draws('q 10 0 0 10 0 0 cm BI /W 1 /H 1 /BPC 8 /CS /G ID \x00 EI Q')).toBe(true);
    expect(draws('q /Im1 Do Q', { Im1: true })).toBe(true);
    expect(draws('q /Fm1 Do Q', { Fm1: false })).toBe(false);
    expect(draws('0 0 m 100 100 l S 0 0 50 50 re f')).toBe(false);
    expect(draws('% Tj in a comment\n0 0 m 1 1 l S')).toBe(false);
    expect(draws('/Tj gs (a \\) Tj) pop <54 6A> pop << /Tj 1 >> pop')).toBe(false);
    expect(draws('')).toBe(false);
  });
});

describe('pdf: cutting pages out of a real PDF (@cantoo/pdf-lib), read back by pdfjs', () => {
  it('cuts the selected pages, in file order, into a PDF pdfjs reads', async () => {
    const pdf = await openPdf(await drawnPdf(FOUR), [], false);
    expect(pdf.pageCount).toBe(4);
    expect(pdf.unlocked).toBe(false);
    expect(await pageTexts(await pdf.cut([1, 4]))).toEqual(['page one', 'page four']);
    expect(await pageTexts(await pdf.cut([3]))).toEqual(['page three']);
  });

  it('a page whose content inflates past 64 MiB (a deflate bomb of spaces) is taken as drawing, not read whole: it separates nothing', async () => {
    const bomb = deflateSync(Buffer.alloc(100 * 1024 * 1024, 0x20), { level: 9 });
    const text = Buffer.from('BT /F1 12 Tf 10 10 Td (hi) Tj ET');
    const objects = [
      Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
      Buffer.from('<< /Type /Pages /Kids [3 0 R 5 0 R] /Count 2 >>'),
      Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>'),
      Buffer.concat([
        Buffer.from(`<< /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`),
        bomb,
        Buffer.from('\nendstream'),
      ]),
      Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 6 0 R >>'),
      Buffer.concat([Buffer.from(`<< /Length ${text.length} >>\nstream\n`), text, Buffer.from('\nendstream')]),
    ];
    const pdfBytes = pdfOf('1.4', objects);
    const pdf = await openPdf(pdfBytes, [], false);
    expect(pdf.pageCount).toBe(2);
    expect([pdf.isBlank(1), pdf.isBlank(2)]).toEqual([false, false]);
  });

  it('an object stream that inflates past 64 MiB (a PDF bomb) is refused before the library loads it: the file fails, not the run', async () => {
    const bomb = deflateSync(Buffer.concat([Buffer.from('5 0 '), Buffer.alloc(100 * 1024 * 1024, 0x20)]), { level: 9 });
    const text = Buffer.from('BT /F1 12 Tf 10 10 Td (hi) Tj ET');
    const objects = [
      Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
      Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
      Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>'),
      Buffer.concat([Buffer.from(`<< /Length ${text.length} >>\nstream\n`), text, Buffer.from('\nendstream')]),
      Buffer.concat([
        Buffer.from(`<< /Type /ObjStm /N 1 /First 4 /Length ${bomb.length} /Filter /FlateDecode >>\nstream\n`),
        bomb,
        Buffer.from('\nendstream'),
      ]),
    ];
    const pdfBytes = pdfOf('1.5', objects);
    const refused = await openPdf(pdfBytes, [], false).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PdfError);
    expect((refused as PdfError).code).toBe('damaged');
    expect((refused as PdfError).message).toMatch(/an object stream inflates past 64 MiB \(a PDF bomb\?\)/);
    // Object streams that real writers make (the library's own save) pass.
    const plain = await (await openPdf(await drawnPdf(FOUR), [], false)).cut([1, 2]);
    expect((await openPdf(plain, [], false)).pageCount).toBe(2);
  });

  it('the same cut of the same file is the same bytes (nothing dated, nothing random)', async () => {
    const bytes = await drawnPdf(FOUR);
    const a = await (await openPdf(bytes, [], false)).cut([2, 3]);
    const b = await (await openPdf(bytes, [], false)).cut([2, 3]);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it('blank pages: no text and no image; a page with only an image, or only text, is not blank; a ruled line alone is', async () => {
    const image = await grayPng({ width: 4, height: 4, pixels: new Uint8Array(16).fill(90) });
    const pdf = await openPdf(
      await drawnPdf([{ lines: ['a'] }, {}, { image }, { rule: true }, { lines: ['b'], rule: true }]),
      [],
      false,
    );
    expect([1, 2, 3, 4, 5].map((p) => pdf.isBlank(p))).toEqual([false, true, false, true, false]);
  });

  it('a file that is not a PDF is a PdfError "damaged", not a crash', async () => {
    const err = await openPdf(Buffer.from('%PDF-1.4\nnot really'), [], false).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PdfError);
    expect((err as PdfError).code).toBe('damaged');
  });
});

describe('pdf: locked PDFs (--password-file)', () => {
  const locks: Array<[string, PdfLock]> = [
    ['RC4 40-bit', { userPassword: 'statement-2026', ownerPassword: 'bank-owner', pdfVersion: '1.3' }],
    ['RC4 128-bit', { userPassword: 'statement-2026', ownerPassword: 'bank-owner', pdfVersion: '1.4' }],
    ['AES-128', { userPassword: 'statement-2026', ownerPassword: 'bank-owner', pdfVersion: '1.7' }],
    ['AES-256 (R5)', { userPassword: 'statement-2026', ownerPassword: 'bank-owner', pdfVersion: '1.7ext3' }],
  ];

  it.each(locks)(
    '%s: the trailer says encrypted; the second password opens it; the cut is not encrypted',
    async (_, lock) => {
      const locked = await drawnPdf(FOUR, lock);
      expect(await pdfBytesAreEncrypted(locked)).toBe(true);
      const pdf = await openPdf(locked, ['wrong', 'statement-2026'], true);
      expect(pdf.unlocked).toBe(true);
      const cut = await pdf.cut([2]);
      expect(await pdfBytesAreEncrypted(cut)).toBe(false);
      expect(await pageTexts(cut)).toEqual(['page two']);
      expect(Buffer.from(cut).includes('statement-2026')).toBe(false);
    },
  );

  it('AES-256 (R6, as qpdf and Acrobat write it), the trailer a cross-reference stream: found encrypted, opens with its password', async () => {
    const dir = tempDir();
    await writeFile(join(dir, 'plain.pdf'), await drawnPdf(FOUR));
    execFileSync('qpdf', [
      '--object-streams=generate',
      '--encrypt',
      'r6-secret',
      'owner-secret',
      '256',
      '--',
      join(dir, 'plain.pdf'),
      join(dir, 'r6.pdf'),
    ]);
    const handle = await open(join(dir, 'r6.pdf'));
    const size = (await handle.stat()).size;
    const bytes = Buffer.alloc(size);
    await handle.read(bytes, 0, size, 0);
    expect(await pdfIsEncrypted(handle, size)).toBe(true);
    await handle.close();
    const pdf = await openPdf(bytes, ['r6-secret'], true);
    expect(await pageTexts(await pdf.cut([1, 2, 3, 4]))).toEqual(['page one', 'page two', 'page three', 'page four']);
  });

  it('linearized ("Fast Web View", as statements are served), classic or stream cross-references: found encrypted by the trailer startxref names', async () => {
    const dir = tempDir();
    await writeFile(join(dir, 'plain.pdf'), await drawnPdf(FOUR));
    for (const streams of ['disable', 'generate']) {
      const out = join(dir, `lin-${streams}.pdf`);
      execFileSync('qpdf', [
        '--linearize',
        `--object-streams=${streams}`,
        '--encrypt',
        'lin-secret',
        'owner-secret',
        '256',
        '--',
        join(dir, 'plain.pdf'),
        out,
      ]);
      const handle = await open(out);
      expect(await pdfIsEncrypted(handle, (await handle.stat()).size), streams).toBe(true);
      await handle.close();
    }
    execFileSync('qpdf', ['--linearize', '--', join(dir, 'plain.pdf'), join(dir, 'lin-plain.pdf')]);
    const plain = await open(join(dir, 'lin-plain.pdf'));
    expect(await pdfIsEncrypted(plain, (await plain.stat()).size)).toBe(false);
    await plain.close();
  });

  it('locked only against editing (an empty user password): opens with no password file', async () => {
    const locked = await drawnPdf(FOUR, { userPassword: '', ownerPassword: 'bank-owner', pdfVersion: '1.7' });
    expect(await pdfBytesAreEncrypted(locked)).toBe(true);
    const pdf = await openPdf(locked, [], true);
    expect(await pageTexts(await pdf.cut([1]))).toEqual(['page one']);
  });

  it('no password, or none that opens it: "encrypted: give --password-file", and no password in the message', async () => {
    const locked = await drawnPdf(FOUR, locks[2]![1]);
    const none = await openPdf(locked, [], true).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(PdfError);
    expect((none as PdfError).code).toBe('encrypted');
    expect((none as PdfError).message).toMatch(/^encrypted: give --password-file/);
    const wrong = await openPdf(locked, ['guess-one', 'guess-two'], true).catch((e: unknown) => e);
    expect((wrong as PdfError).code).toBe('encrypted');
    expect((wrong as PdfError).message).toMatch(/^encrypted: no password in --password-file opens it/);
    expect(String((wrong as PdfError).message)).not.toMatch(/guess/);
  });

  it('a plain PDF: the trailer (classic or a cross-reference stream) says not encrypted', async () => {
    const plain = await drawnPdf(FOUR);
    expect(await pdfBytesAreEncrypted(plain)).toBe(false);
    // The library's own save writes a cross-reference stream: its dictionary is read at startxref.
    const cut = await (await openPdf(plain, [], false)).cut([1]);
    expect(Buffer.from(cut).toString('latin1')).toContain('/XRef');
    expect(await pdfBytesAreEncrypted(cut)).toBe(false);
  });

  it('the trailer check on damaged files: truncated, no startxref, an offset past the end: not encrypted, no throw', async () => {
    const plain = await drawnPdf(FOUR);
    expect(await pdfBytesAreEncrypted(plain.subarray(0, 200))).toBe(false);
    expect(await pdfBytesAreEncrypted(Buffer.from('%PDF-1.7\n'))).toBe(false);
    expect(await pdfBytesAreEncrypted(Buffer.from('%PDF-1.7\nstartxref\n999999\n%%EOF\n'))).toBe(false);
    expect(await pdfBytesAreEncrypted(new Uint8Array())).toBe(false);
  });

  it('the password file: a password a line, CRLF or LF, blank lines left out; unreadable or empty is a usage error naming the file only', async () => {
    expect(parsePasswords('one\r\ntwo with spaces \n\nthree')).toEqual(['one', 'two with spaces ', 'three']);
    const dir = tempDir();
    const empty = join(dir, 'empty.txt');
    await writeFile(empty, '\n\n');
    expect(() => readPasswordFile(empty)).toThrow(/holds no password/);
    expect(() => readPasswordFile(join(dir, 'missing.txt'))).toThrow(/cannot read it \(no such file\)/);
  });

  it('a password file other users can read gets a note saying how to close it; one of mode 600 gets none', async () => {
    const dir = tempDir();
    const file = join(dir, 'pw.txt');
    await writeFile(file, 'secret-one\n', { mode: 0o644 });
    const note = passwordFileNote(file);
    expect(note).toMatch(/can be read by other users of this machine \(mode 644\): chmod 600 /);
    expect(note).not.toContain('secret-one');
    await writeFile(join(dir, 'closed.txt'), 'secret-two\n', { mode: 0o600 });
    expect(passwordFileNote(join(dir, 'closed.txt'))).toBeUndefined();
    expect(passwordFileNote(join(dir, 'missing.txt'))).toBeUndefined();
  });
});

/** A PDF of these objects (1 0 R the catalog), numbered in order, with its cross-reference table. */
function pdfOf(version: string, objects: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`%PDF-${version}\n`)];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  objects.forEach((o, i) => {
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')]);
    offsets.push(at);
    parts.push(obj);
    at += obj.length;
  });
  const size = objects.length + 1;
  const xref = `xref\n0 ${size}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}
