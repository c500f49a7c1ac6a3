import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/**
 * A large honest PDF written by streaming, never held whole: each page carries a few lines of
 * text (an invoice's number, date and total on the first page, its due date on the last, "Page n"
 * lines between) and draws a grey image of incompressible
 * noise (a scan with its text layer), so the file is about pages × imageBytes. Objects are
 * numbered as written and the cross-reference table is built from the offsets counted on the way.
 */
export type BigPdf = { path: string; size: number; pages: number };

export async function writeBigPdf(
  path: string,
  options: { pages: number; imageBytes: number; invoice?: string },
): Promise<BigPdf> {
  const { pages } = options;
  const side = Math.max(1, Math.floor(Math.sqrt(options.imageBytes)));
  // One block of noise, reused by every page (each page's image is still incompressible).
  const noise = randomBytes(side * side);
  const out = createWriteStream(path);
  let offset = 0;
  const offsets: number[] = [];
  const write = async (chunk: string | Buffer): Promise<void> => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    offset += buffer.length;
    if (!out.write(buffer)) await once(out, 'drain');
  };
  const object = async (n: number, body: string, stream?: Buffer | string): Promise<void> => {
    offsets[n] = offset;
    if (stream === undefined) return write(`${n} 0 obj\n${body}\nendobj\n`);
    await write(`${n} 0 obj\n${body}\nstream\n`);
    await write(stream);
    await write('\nendstream\nendobj\n');
  };
  const pageObject = (i: number): number => 4 + 3 * i;
  await write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
  await object(1, '<< /Type /Catalog /Pages 2 0 R >>');
  const kids = Array.from({ length: pages }, (_, i) => `${pageObject(i)} 0 R`).join(' ');
  await object(2, `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`);
  await object(3, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const invoice = options.invoice ?? 'INV-BIG-0001';
  for (let i = 0; i < pages; i++) {
    const n = pageObject(i);
    const lines =
      i === 0
        ? [`Invoice Number: ${invoice}`, 'Invoice Date: 2024-03-15', 'Total: 4321.00']
        : i === pages - 1
          ? [`Page ${i + 1} of ${pages}`, 'Due Date: 2024-04-15']
          : [`Page ${i + 1} of ${pages}`, `Delivery note ${i + 1}`];
    const text = lines.map((line, k) => `1 0 0 1 72 ${780 - 16 * k} Tm (${line}) Tj`).join('\n');
    const content = `q 200 0 0 200 300 300 cm /Im1 Do Q\nBT /F1 11 Tf\n${text}\nET`;
    await object(
      n,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> /XObject << /Im1 ${n + 2} 0 R >> >> /Contents ${n + 1} 0 R >>`,
    );
    await object(n + 1, `<< /Length ${Buffer.byteLength(content, 'latin1')} >>`, content);
    await object(
      n + 2,
      `<< /Type /XObject /Subtype /Image /Width ${side} /Height ${side} /ColorSpace /DeviceGray /BitsPerComponent 8 /Length ${noise.length} >>`,
      noise,
    );
  }
  const count = pageObject(pages - 1) + 3;
  const xref = offset;
  await write(`xref\n0 ${count}\n0000000000 65535 f \n`);
  for (let n = 1; n < count; n++) await write(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  await write(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  out.end();
  await once(out, 'finish');
  return { path, size: offset, pages };
}
