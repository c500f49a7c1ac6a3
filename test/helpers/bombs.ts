import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createDeflate } from 'node:zlib';
import { makePdf } from './pdf.ts';

/** Hostile PDFs, generated on the fly (nothing big is checked in); no vitest here, so scripts can use them too. */

/** A real one-page PDF whose page tree claims `count` pages (pdfjs reports the /Count as the page count). */
export async function pdfClaimingPages(count: number, text = 'Invoice Number: INV-66666'): Promise<Buffer> {
  const pdf = (await makePdf([[text]])).toString('latin1');
  if (!pdf.includes('/Count 1')) throw new Error('pdfkit changed: no "/Count 1" to rewrite');
  return Buffer.from(pdf.replace('/Count 1', `/Count ${count}`), 'latin1');
}

/**
 * A small PDF whose cross-reference stream inflates to `entries` seven-byte entries (a
 * decompression bomb in the part every reader must parse first, page counting included):
 * a few hundred KB on disk, and a reader that believes /Size builds every entry.
 */
export async function xrefBombPdf(entries: number): Promise<Buffer> {
  let text = '%PDF-1.5\n';
  const offsets: number[] = [];
  for (const body of [
    '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n',
    '2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n',
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n',
  ]) {
    offsets.push(text.length);
    text += body;
  }
  const xrefAt = text.length;
  const row = (type: number, offset: number, generation: number) => {
    const b = Buffer.alloc(7);
    b.writeUInt8(type, 0);
    b.writeUInt32BE(offset, 1);
    b.writeUInt16BE(generation, 5);
    return b;
  };
  const head = Buffer.concat([row(0, 0, 65535), ...offsets.map((o) => row(1, o, 0)), row(1, xrefAt, 0)]);
  const block = Buffer.concat(Array.from({ length: 65_536 }, () => row(1, 9, 0)));
  const remaining = entries - (offsets.length + 2);
  // Deflated as a stream, so the test never holds the inflated size.
  async function* inflated() {
    yield head;
    for (let left = remaining; left > 0; left -= 65_536) yield left >= 65_536 ? block : block.subarray(0, left * 7);
  }
  const out: Buffer[] = [];
  await pipeline(Readable.from(inflated()), createDeflate({ level: 9 }), async (chunks: AsyncIterable<Buffer>) => {
    for await (const c of chunks) out.push(c);
  });
  const data = Buffer.concat(out);
  const dict = `4 0 obj\n<< /Type /XRef /Size ${entries} /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length ${data.length} >>\nstream\n`;
  return Buffer.concat([
    Buffer.from(text + dict, 'latin1'),
    data,
    Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1'),
  ]);
}

/**
 * A one-page PDF whose content stream is Flate'd twice over `inflated` bytes of zeros (some
 * kilobytes on disk for a gigabyte decoded). Built as streams (zeros -> deflate -> deflate), so making a 1 GB
 * bomb never holds more than a few MB; a reader that decodes the page's content holds all of it.
 */
export function flateBombPdf(inflated: number, text = 'Invoice Number: INV-BOMB', pattern = '\0'): Promise<Buffer> {
  // Made once per worker: files share their worker (isolate: false), and a bomb is a few KB.
  const key = `${inflated}\0${text}\0${pattern}`;
  const made = flateBombs.get(key) ?? makeFlateBomb(inflated, text, pattern);
  flateBombs.set(key, made);
  return made;
}
const flateBombs = new Map<string, Promise<Buffer>>();

async function makeFlateBomb(inflated: number, text: string, pattern: string): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024, pattern, 'latin1');
  async function* zeros() {
    for (let left = inflated; left > 0; left -= chunk.length)
      yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
  const out: Buffer[] = [];
  // The inner pass is the costly one (it reads every inflated byte): level 1, and run-length only
  // when the pattern is one byte, make a 1 GB bomb in about a second instead of six (level 9 took
  // 5.7 s beside other work); the outer pass, over a few MB, keeps the file small.
  const inner = pattern.length === 1 ? { level: 1, strategy: constants.Z_RLE } : { level: 1 };
  await pipeline(
    Readable.from(zeros()),
    createDeflate(inner),
    createDeflate({ level: 9 }),
    async (chunks: AsyncIterable<Buffer>) => {
      for await (const c of chunks) out.push(c);
    },
  );
  const bomb = Buffer.concat(out);
  // A little real text first, in a stream of its own, so the page reads as a page.
  const honest = Buffer.from(`BT /F1 12 Tf 72 720 Td (${text}) Tj ET\n`, 'latin1');
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let length = 0;
  const add = (b: Buffer) => {
    parts.push(b);
    length += b.length;
  };
  const obj = (n: number, body: Buffer | string, stream?: Buffer) => {
    offsets[n] = length;
    add(Buffer.from(`${n} 0 obj\n`, 'latin1'));
    add(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    if (stream) {
      add(Buffer.from('\nstream\n', 'latin1'));
      add(stream);
      add(Buffer.from('\nendstream', 'latin1'));
    }
    add(Buffer.from('\nendobj\n', 'latin1'));
  };
  add(Buffer.from('%PDF-1.4\n', 'latin1'));
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  obj(
    3,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents [5 0 R 6 0 R] >>',
  );
  obj(4, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  obj(5, `<< /Length ${honest.length} >>`, honest);
  obj(6, `<< /Length ${bomb.length} /Filter [/FlateDecode /FlateDecode] >>`, bomb);
  const xrefAt = length;
  const rows = offsets.slice(1).map((o) => `${String(o).padStart(10, '0')} 00000 n \n`);
  add(
    Buffer.from(
      `xref\n0 ${offsets.length}\n0000000000 65535 f \n${rows.join('')}trailer\n<< /Size ${offsets.length} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}
