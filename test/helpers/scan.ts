import { createCanvas } from '@napi-rs/canvas';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import PDFDocument from 'pdfkit';
import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';

/**
 * Scans made by the tests: a PDF page rendered to pixels (what a scanner hands over), as a
 * PNG, as a grey TIFF of one or many pages, or as a PDF that holds only the image.
 */

export type Gray = { width: number; height: number; pixels: Uint8Array };

/** The first page of a PDF as grey pixels at `dpi`, on white. */
export async function renderGray(pdf: Uint8Array, dpi = 200): Promise<Gray> {
  const task = getDocument({ data: new Uint8Array(pdf), verbosity: 0 });
  try {
    const page = await (await task.promise).getPage(1);
    const viewport = page.getViewport({ scale: dpi / 72 });
    const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
    const context = canvas.getContext('2d');
    context.fillStyle = 'white';
    context.fillRect(0, 0, canvas.width, canvas.height);
    // pdfjs draws on any 2D context; @napi-rs/canvas's is the one its Node build expects.
    await page.render({ canvas: null, canvasContext: context as never, viewport }).promise;
    const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
    const pixels = new Uint8Array(canvas.width * canvas.height);
    for (let i = 0; i < pixels.length; i++) pixels[i] = rgba[i * 4] ?? 255;
    return { width: canvas.width, height: canvas.height, pixels };
  } finally {
    await task.destroy();
  }
}

const deflateAsync = promisify(deflate);

/**
 * An 8-bit greyscale PNG (colour type 0), as a scanner writes one: a quarter of the RGBA canvas's
 * data, so cheaper to make and for OCR to decode (a canvas has no grey encoder: it took 0.6 CPU-s
 * for an A4 page at 200 dpi, this about a tenth of that).
 */
export async function grayPng(image: Gray): Promise<Buffer> {
  const { width, height, pixels } = image;
  // Each row: filter type 0 (none), then its pixels.
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // bit depth 8, grey, deflate, no filter set, not interlaced
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(data, crc32(head.subarray(4))), 0);
    return [head, data, crc];
  };
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    ...chunk('IHDR', header),
    ...chunk('IDAT', await deflateAsync(raw)),
    ...chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A baseline TIFF, uncompressed 8-bit grey, one image file directory per page. */
export function grayTiff(pages: readonly Gray[]): Buffer {
  const ENTRIES = 9;
  const ifdSize = 2 + ENTRIES * 12 + 4;
  let size = 8;
  for (const p of pages) size += ifdSize + p.pixels.length;
  const out = Buffer.alloc(size);
  out.write('II', 0, 'latin1');
  out.writeUInt16LE(42, 2);
  let at = 8;
  out.writeUInt32LE(at, 4);
  pages.forEach((p, i) => {
    const ifd = at;
    const data = ifd + ifdSize;
    const tags: Array<[number, number, number]> = [
      [256, 4, p.width], // ImageWidth
      [257, 4, p.height], // ImageLength
      [258, 3, 8], // BitsPerSample
      [259, 3, 1], // Compression: none
      [262, 3, 1], // PhotometricInterpretation: black is zero
      [273, 4, data], // StripOffsets
      [277, 3, 1], // SamplesPerPixel
      [278, 4, p.height], // RowsPerStrip
      [279, 4, p.pixels.length], // StripByteCounts
    ];
    out.writeUInt16LE(ENTRIES, ifd);
    tags.forEach(([tag, type, value], k) => {
      const e = ifd + 2 + k * 12;
      out.writeUInt16LE(tag, e);
      out.writeUInt16LE(type, e + 2);
      out.writeUInt32LE(1, e + 4);
      if (type === 3) out.writeUInt16LE(value, e + 8);
      else out.writeUInt32LE(value, e + 8);
    });
    const next = i + 1 < pages.length ? data + p.pixels.length : 0;
    out.writeUInt32LE(next, ifd + 2 + ENTRIES * 12);
    out.set(p.pixels, data);
    at = data + p.pixels.length;
  });
  return out;
}

/** A PDF whose one page is only the image: a scan with no text layer. */
export async function imagePdf(image: Gray, dpi = 200): Promise<Buffer> {
  const png = await grayPng(image);
  const doc = new PDFDocument({ autoFirstPage: false, info: { CreationDate: new Date(0), ModDate: new Date(0) } });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  const width = (image.width * 72) / dpi;
  const height = (image.height * 72) / dpi;
  doc.addPage({ size: [width, height], margin: 0 });
  doc.image(png, 0, 0, { width, height });
  doc.end();
  await done;
  return Buffer.concat(chunks);
}
