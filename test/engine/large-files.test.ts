import { truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IMAGE_MAX_BYTES, TEXT_MAX_BYTES, countPagesInProcess, extractInProcess } from '../../src/engine/extract.ts';
import { LOADED_BYTES_BUDGET, WHOLE_READ_BYTES } from '../../src/engine/pdf-text.ts';
import { EngineError } from '../../src/engine/types.ts';
import { type ByteSource, type FileReader, fileSource } from '../../src/engine/source.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { writeBigPdf } from '../helpers/big-pdf.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * The engine reads a stored file by ranges, never whole. Each file here is
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

  it('a TIFF over the whole-image budget is counted from its page directories, and its extraction is too_large, read no further', async () => {
    // Two pages whose directories sit at the start; the rest is a hole in a sparse file.
    const path = join(tempDir(), 'scan.tiff');
    const head = Buffer.alloc(64);
    head.write('II*\0', 0, 'latin1');
    head.writeUInt32LE(8, 4);
    head.writeUInt16LE(1, 8); // one entry: width 100
    head.writeUInt16LE(256, 10);
    head.writeUInt16LE(3, 12);
    head.writeUInt32LE(1, 14);
    head.writeUInt16LE(100, 18);
    head.writeUInt32LE(26, 22); // next directory
    head.writeUInt16LE(0, 26); // an empty second page
    head.writeUInt32LE(0, 28);
    writeFileSync(path, head);
    truncateSync(path, IMAGE_MAX_BYTES + 1);
    const c = await counted(path);
    try {
      expect(await countPagesInProcess(c.source, 'image/tiff')).toBe(2);
      expect(c.bytesRead()).toBeLessThan(16_384);
      const err = await extractInProcess({ bytes: c.source, mimeType: 'image/tiff', fields: INVOICE_FIELDS }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ code: 'too_large' });
      expect((err as Error).message).toContain(`the engine reads images up to ${IMAGE_MAX_BYTES} bytes whole`);
      expect(c.bytesRead()).toBeLessThan(32_768);
    } finally {
      await c.source.close();
    }
  });

  it('a text file over its budget is one page, counted from its head; its extraction is too_large', async () => {
    const path = join(tempDir(), 'notes.txt');
    writeFileSync(path, 'Invoice Number: INV-1\n');
    truncateSync(path, TEXT_MAX_BYTES + 1); // declared text/plain: the kind is the declared type's
    const c = await counted(path);
    try {
      expect(await countPagesInProcess(c.source, 'text/plain')).toBe(1);
      expect(c.bytesRead()).toBeLessThanOrEqual(8192);
      const err = await extractInProcess({ bytes: c.source, mimeType: 'text/plain', fields: INVOICE_FIELDS }).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'too_large' });
      expect((err as Error).message).toContain(`the engine reads text files up to ${TEXT_MAX_BYTES} bytes whole`);
    } finally {
      await c.source.close();
    }
  });
});
