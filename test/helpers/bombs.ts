import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflate } from 'node:zlib';
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
