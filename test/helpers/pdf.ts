import PDFDocument from 'pdfkit';

/**
 * A PDF made with pdfkit: each page a list of lines drawn top to bottom. Deterministic bytes.
 * `size`: pdfkit's name of the pages' size.
 */
export async function makePdf(pages: string[][], size = 'A4'): Promise<Buffer> {
  const doc = new PDFDocument({ autoFirstPage: false, info: { CreationDate: new Date(0), ModDate: new Date(0) } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  for (const lines of pages) {
    doc.addPage({ size, margin: 50 });
    doc.font('Helvetica').fontSize(11);
    for (const line of lines) doc.text(line);
  }
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

/** A one-page invoice whose fields the default parser grounds. */
export function invoicePdf(n: number, pageCount = 1): Promise<Buffer> {
  const first = [
    `Invoice Number: INV-${String(n).padStart(5, '0')}`,
    'Invoice Date: 2024-03-15',
    `Total: ${(100 + n).toFixed(2)}`,
  ];
  const rest = Array.from({ length: pageCount - 1 }, (_, i) => [`Page ${i + 2} notes`]);
  return makePdf([first, ...rest]);
}

/** What one page of `drawnPdf` holds: lines of text, an image (PNG bytes), a ruled line (a path, neither text nor image). */
export type DrawnPage = { lines?: string[]; image?: Buffer; rule?: true };
/** pdfkit's encryptions: 1.3 RC4 40-bit, 1.4 RC4 128-bit, 1.7 AES-128, 1.7ext3 AES-256. */
export type PdfLock = { userPassword: string; ownerPassword?: string; pdfVersion: '1.3' | '1.4' | '1.7' | '1.7ext3' };

/** A PDF of small pages, each drawn as told, encrypted by pdfkit when `lock` is given. Deterministic bytes but for a lock's random salt. */
export async function drawnPdf(pages: DrawnPage[], lock?: PdfLock): Promise<Buffer> {
  const doc = new PDFDocument({
    autoFirstPage: false,
    info: { CreationDate: new Date(0), ModDate: new Date(0) },
    ...(lock ?? {}),
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  for (const page of pages) {
    doc.addPage({ size: [300, 300], margin: 20 });
    doc.font('Helvetica').fontSize(11);
    for (const line of page.lines ?? []) doc.text(line);
    if (page.image) doc.image(page.image, 50, 100, { width: 100 });
    if (page.rule) doc.moveTo(20, 250).lineTo(280, 250).stroke();
  }
  doc.end();
  await done;
  return Buffer.concat(chunks);
}
