import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { countPagesInProcess, extractInProcess } from '../../src/engine/extract.ts';
import { LOADED_BYTES_BUDGET, WHOLE_READ_BYTES } from '../../src/engine/pdf-text.ts';
import { type ByteSource, type FileReader, fileSource } from '../../src/engine/source.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { writeBigPdf } from '../helpers/big-pdf.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * Issue 25 item 2: the engine reads a stored file by ranges, never whole. Each file here is
 * larger than WHOLE_READ_BYTES, written by streaming, and read through a file handle that counts
 * the bytes it hands out.
 */

type Counted = { source: ByteSource; bytesRead: () => number; reads: () => number };

async function counted(path: string): Promise<Counted> {
  const handle = await open(path, 'r');
  let bytesRead = 0;
  let reads = 0;
  const reader: FileReader = {
    read: async (buffer, offset, length, position) => {
      const r = await handle.read(buffer, offset, length, position);
      bytesRead += r.bytesRead;
      reads++;
      return r;
    },
    stat: () => handle.stat(),
    close: () => handle.close(),
  };
  return { source: await fileSource(reader), bytesRead: () => bytesRead, reads: () => reads };
}

describe('engine: large files by ranges', () => {
  it('counts the pages of a 60 MB PDF reading a small part of it', async () => {
    const pdf = await writeBigPdf(join(tempDir(), 'big.pdf'), { pages: 120, imageBytes: 500_000 });
    expect(pdf.size).toBeGreaterThan(WHOLE_READ_BYTES * 3);
    const c = await counted(pdf.path);
    try {
      expect(await countPagesInProcess(c.source, 'application/pdf')).toBe(120);
    } finally {
      await c.source.close();
    }
    console.log(`count: ${c.bytesRead()} of ${pdf.size} bytes read in ${c.reads()} reads`);
    // The cross-reference table (20 bytes an object) and the page tree: a tenth of the file at most.
    expect(c.bytesRead()).toBeLessThan(pdf.size / 10);
  });

  it('extracts a PDF larger than what pdfjs may hold loaded: every page read, the first and the last', async () => {
    // Each page's image is loaded by pdfjs (it reads an XObject to learn its kind), so the file
    // passes LOADED_BYTES_BUDGET and the document is reopened on the way.
    const pages = Math.ceil((LOADED_BYTES_BUDGET * 1.3) / 500_000);
    const pdf = await writeBigPdf(join(tempDir(), 'big.pdf'), { pages, imageBytes: 500_000 });
    expect(pdf.size).toBeGreaterThan(LOADED_BYTES_BUDGET);
    const c = await counted(pdf.path);
    try {
      const out = await extractInProcess({ bytes: c.source, mimeType: 'application/pdf', fields: INVOICE_FIELDS });
      expect(out.pageCount).toBe(pages);
      expect(out.results).toMatchObject({
        invoice_number: 'INV-BIG-0001',
        invoice_date: '2024-03-15',
        due_date: '2024-04-15',
        total: 4321,
      });
      expect(out.grounding.due_date?.page).toBe(pages);
    } finally {
      await c.source.close();
    }
    console.log(`extract: ${c.bytesRead()} of ${pdf.size} bytes read in ${c.reads()} reads`);
  });
});
