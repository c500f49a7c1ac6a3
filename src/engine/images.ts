import type { ByteSource } from './source.ts';
import { EngineError } from './types.ts';

/**
 * Images have no text layer, so the engine only counts their pages (what the service
 * charges) and grounds nothing. The headers are checked so that a damaged file is an
 * error rather than a charged page.
 */

export type ImageKind = 'png' | 'jpeg' | 'tiff';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

export function imageKindOf(bytes: Uint8Array): ImageKind | null {
  if (PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (
    (bytes[0] === 0x49 && bytes[1] === 0x49 && bytes[2] === 0x2a && bytes[3] === 0x00) ||
    (bytes[0] === 0x4d && bytes[1] === 0x4d && bytes[2] === 0x00 && bytes[3] === 0x2a)
  )
    return 'tiff';
  return null;
}

function corrupt(what: string): EngineError {
  return new EngineError('corrupt', `${what}; check that the file is complete and not damaged, then submit it again`);
}

export function countImagePages(kind: ImageKind, bytes: Uint8Array): number {
  switch (kind) {
    case 'png':
      // The first chunk after the signature must be IHDR, 13 bytes long.
      if (bytes.length < 33 || String.fromCharCode(...bytes.subarray(12, 16)) !== 'IHDR')
        throw corrupt('the PNG has no image header');
      return 1;
    case 'jpeg':
      if (bytes.length < 4 || bytes[bytes.length - 2] !== 0xff || bytes[bytes.length - 1] !== 0xd9) {
        throw corrupt('the JPEG is truncated (it has no end-of-image marker)');
      }
      return 1;
    case 'tiff':
      return countTiffPages(bytes);
  }
}

/**
 * The pages of an image file of any size, from its headers read by ranges (a PNG's header, a
 * JPEG's end marker, a TIFF's chain of page directories): the file is never read whole.
 */
/** More pages than any scanner writes to one TIFF: a chain longer than this is damaged or hostile. */
const MAX_TIFF_PAGES = 100_000;

export async function countImagePagesFrom(kind: ImageKind, source: ByteSource): Promise<number> {
  if (kind === 'png') return countImagePages(kind, await source.read(0, 33));
  if (kind === 'jpeg') {
    if (source.size < 4) throw corrupt('the JPEG is truncated (it has no end-of-image marker)');
    const head = await source.read(0, 2);
    return countImagePages(kind, Uint8Array.of(...head, ...(await source.read(source.size - 2, 2))));
  }
  const header = await source.read(0, 8);
  if (header.length < 8) throw corrupt('the TIFF header is truncated');
  const little = header[0] === 0x49;
  const u16 = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint16(0, little);
  const u32 = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0, little);
  let offset = u32(header.subarray(4));
  const seen = new Set<number>();
  let pages = 0;
  while (offset !== 0) {
    if (seen.has(offset)) throw corrupt('the TIFF page chain loops');
    if (pages >= MAX_TIFF_PAGES) throw corrupt(`the TIFF chains more than ${MAX_TIFF_PAGES} pages`);
    if (offset + 2 > source.size) throw corrupt('the TIFF points past its end');
    seen.add(offset);
    const entries = u16(await source.read(offset, 2));
    const next = offset + 2 + entries * 12;
    if (next + 4 > source.size) throw corrupt('the TIFF page directory is truncated');
    pages++;
    offset = u32(await source.read(next, 4));
  }
  if (pages === 0) throw corrupt('the TIFF has no pages');
  return pages;
}

/** A TIFF holds one image file directory (IFD) per page, chained by offsets from the header. */
function countTiffPages(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const little = bytes[0] === 0x49;
  if (bytes.length < 8) throw corrupt('the TIFF header is truncated');
  let offset = view.getUint32(4, little);
  const seen = new Set<number>();
  let pages = 0;
  while (offset !== 0) {
    if (seen.has(offset)) throw corrupt('the TIFF page chain loops');
    if (offset + 2 > bytes.length) throw corrupt('the TIFF points past its end');
    seen.add(offset);
    const entries = view.getUint16(offset, little);
    const next = offset + 2 + entries * 12;
    if (next + 4 > bytes.length) throw corrupt('the TIFF page directory is truncated');
    pages++;
    offset = view.getUint32(next, little);
  }
  if (pages === 0) throw corrupt('the TIFF has no pages');
  return pages;
}

export type ImageSize = { width: number; height: number };

/**
 * Width and height from the header alone, so that a page too large to decode is refused
 * before any pixel is held (OCR's memory is outside the worker's heap limit).
 */
export function imageSizes(kind: ImageKind, bytes: Uint8Array): ImageSize[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (kind) {
    case 'png':
      return [{ width: view.getUint32(16), height: view.getUint32(20) }];
    case 'jpeg':
      return [jpegSize(bytes, view)];
    case 'tiff':
      return tiffDirectories(bytes).map((ifd) => tiffSize(view, ifd, bytes[0] === 0x49));
  }
}

/** Start-of-frame markers (baseline, progressive, lossless, arithmetic) carry the frame's size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegSize(bytes: Uint8Array, view: DataView): ImageSize {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) throw corrupt('the JPEG has a damaged marker');
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (SOF.has(marker)) return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) };
    at += 2 + view.getUint16(at + 2);
  }
  throw corrupt('the JPEG has no frame header');
}

/** The offset of each page's image file directory, in order. */
function tiffDirectories(bytes: Uint8Array): number[] {
  countTiffPages(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const little = bytes[0] === 0x49;
  const out: number[] = [];
  for (let offset = view.getUint32(4, little); offset !== 0; ) {
    out.push(offset);
    offset = view.getUint32(offset + 2 + view.getUint16(offset, little) * 12, little);
  }
  return out;
}

function tiffSize(view: DataView, ifd: number, little: boolean): ImageSize {
  let width = 0;
  let height = 0;
  const entries = view.getUint16(ifd, little);
  for (let i = 0; i < entries; i++) {
    const e = ifd + 2 + i * 12;
    const tag = view.getUint16(e, little);
    const value = view.getUint16(e + 2, little) === 3 ? view.getUint16(e + 8, little) : view.getUint32(e + 8, little);
    if (tag === 256) width = value;
    if (tag === 257) height = value;
  }
  if (width === 0 || height === 0) throw corrupt('a TIFF page has no width or height');
  return { width, height };
}

/**
 * Page `n` (from 1) of a TIFF as a TIFF of its own: the header points at that page's
 * directory, whose link to the next page is cut. Offsets in a TIFF are absolute, so
 * nothing else moves; OCR decodes only the first directory of what it is given.
 */
export function tiffPage(bytes: Uint8Array, n: number): Uint8Array {
  const ifd = tiffDirectories(bytes)[n - 1];
  if (ifd === undefined) throw new RangeError(`the TIFF has no page ${n}`);
  const out = new Uint8Array(bytes);
  const view = new DataView(out.buffer);
  const little = out[0] === 0x49;
  view.setUint32(4, ifd, little);
  view.setUint32(ifd + 2 + view.getUint16(ifd, little) * 12, 0, little);
  return out;
}
