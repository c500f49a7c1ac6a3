/**
 * The sniffing libraries, loaded when first needed rather than at start-up: file-type on the first
 * file sniffed (a rerun whose files the stat cache knows sniffs none), mime-types and mime-db's
 * table only for a file whose content file-type cannot name (a PDF or an image never needs it).
 * mime-types is CommonJS: it is read from its default export, all a bundled import() of it exposes.
 */
let byContent: Promise<typeof import('file-type')> | undefined;
let byName: Promise<typeof import('mime-types')> | undefined;

/**
 * A document's MIME type from its content first (magic bytes, via file-type), then its
 * file name's extension (mime-types), then what the sender declared. Text formats have
 * no magic bytes, so for them the extension decides.
 */
export async function detectMimeType(head: Uint8Array, fileName: string, declared?: string): Promise<string> {
  byContent ??= import('file-type');
  const sniffed = await (await byContent).fileTypeFromBuffer(head);
  if (sniffed) return sniffed.mime;
  byName ??= import('mime-types').then((m) => m.default);
  const named = (await byName).lookup(fileName);
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
  byContent ??= import('file-type');
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
