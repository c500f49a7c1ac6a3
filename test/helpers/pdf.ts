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
