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

/** A TIFF holds one image file directory (IFD) per page, chained by offsets from the header. */
export function countTiffPages(bytes: Uint8Array): number {
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
