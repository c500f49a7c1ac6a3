import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePdf } from '../../test/helpers/pdf.ts';

function invoicePage(n: number, page: number): string[] {
  return [
    `Invoice Number: INV-${String(n).padStart(6, '0')}`,
    'Invoice Date: 2024-03-15',
    `Vendor: Bench Supplies ${n}`,
    `Page ${page}`,
    ...Array.from(
      { length: 12 },
      (_, i) => `Item ${i + 1}  ${i + 1} x ${(n % 97) + i}.50  ${((n % 97) + i) * (i + 1)}.50`,
    ),
    `Total: ${(100 + n).toFixed(2)}`,
  ];
}

/** n distinct one-page invoices (distinct content, so no journal or cache can skip one). */
export async function writeInvoices(dir: string, n: number, prefix = 'invoice'): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    const file = join(dir, `${prefix}-${String(i).padStart(6, '0')}.pdf`);
    writeFileSync(file, await makePdf([invoicePage(i, 1)]));
    files.push(file);
  }
  return files;
}

/** One long document of `pages` invoice-like pages. */
export function longPdf(seed: number, pages: number): Promise<Buffer> {
  return makePdf(Array.from({ length: pages }, (_, p) => invoicePage(seed * 1000 + p, p + 1)));
}

/**
 * n distinct small PDFs, quickly: one pdfkit document, each copy with its own comment
 * after %%EOF (readers ignore it; the sha256 differs). For runs against the stand-in,
 * which reads nothing.
 */
export async function writeCopies(dir: string, n: number, prefix = 'doc-'): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const template = await makePdf([invoicePage(0, 1)]);
  for (let i = 0; i < n; i++) {
    writeFileSync(
      join(dir, `${prefix}${String(i).padStart(6, '0')}.pdf`),
      Buffer.concat([template, Buffer.from(`%bench ${prefix}${i}\n`)]),
    );
  }
}
