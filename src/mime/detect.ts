/** The sniffing libraries (by-content.ts, by-name.ts), loaded when first needed. */
let byContent: Promise<typeof import('./by-content.ts')> | undefined;
let byName: Promise<typeof import('./by-name.ts')> | undefined;

/**
 * A document's MIME type from its content first (magic bytes, via file-type), then its
 * file name's extension (mime-types), then what the sender declared. Text formats have
 * no magic bytes, so for them the extension decides.
 */
export async function detectMimeType(head: Uint8Array, fileName: string, declared?: string): Promise<string> {
  byContent ??= import('./by-content.ts');
  const sniffed = await (await byContent).fileTypeFromBuffer(head);
  if (sniffed) return sniffed.mime;
  byName ??= import('./by-name.ts');
  const named = (await byName).mime.lookup(fileName);
  if (named) return named;
  if (declared && declared.trim() !== '') return declared.trim().toLowerCase();
  return 'application/octet-stream';
}

/**
 * Types whose files always begin with magic bytes file-type knows: a name that claims one of
 * them over content that does not match (a text file named `fake.pdf`) is not that type.
 */
const SIGNED_TYPES = new Set([
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/tiff',
  'image/gif',
  'image/webp',
  'image/bmp',
]);

/**
 * A file's type as a sender tells it, by content: detectMimeType, except that a name claiming a
 * type with magic bytes the content lacks gives no type (application/octet-stream). The emulator
 * keeps detectMimeType: it answers for what a client declared.
 */
export async function detectFileType(head: Uint8Array, fileName: string): Promise<string> {
  byContent ??= import('./by-content.ts');
  const sniffed = await (await byContent).fileTypeFromBuffer(head);
  if (sniffed) return sniffed.mime;
  // Some scanners write bytes before a PDF's header; readers (and the engine) look within the first 1 KiB.
  if (Buffer.from(head.subarray(0, 1024)).includes('%PDF-')) return 'application/pdf';
  const named = await detectMimeType(new Uint8Array(0), fileName);
  return SIGNED_TYPES.has(named) ? 'application/octet-stream' : named;
}

/**
 * The kinds of file the service reads (spec: "for example a PDF"; the engine reads PDF, PNG,
 * JPEG and TIFF), told from the content (detectFileType: a name alone makes no PDF).
 */
const DOCUMENT_TYPES = new Set(['application/pdf', 'image/png', 'image/jpeg', 'image/tiff']);

export function isDocumentType(mimeType: string): boolean {
  return DOCUMENT_TYPES.has(mimeType);
}

/** The media type without parameters, lower-cased: "Application/PDF; x=y" -> "application/pdf". */
export function mediaTypeEssence(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
