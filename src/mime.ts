/**
 * file-type and mime-types (with mime-db's table) load on the first file sniffed, not at
 * start-up: a rerun whose files are all known from the stat cache sniffs none.
 */
let sniffers: Promise<[typeof import('file-type'), typeof import('mime-types')]> | undefined;
function loadSniffers() {
  sniffers ??= Promise.all([import('file-type'), import('mime-types')]);
  return sniffers;
}

/**
 * A document's MIME type from its content first (magic bytes, via file-type), then its
 * file name's extension (mime-types), then what the sender declared. Text formats have
 * no magic bytes, so for them the extension decides.
 */
export async function detectMimeType(head: Uint8Array, fileName: string, declared?: string): Promise<string> {
  const [{ fileTypeFromBuffer }, mime] = await loadSniffers();
  const sniffed = await fileTypeFromBuffer(head);
  if (sniffed) return sniffed.mime;
  const byName = mime.lookup(fileName);
  if (byName) return byName;
  if (declared && declared.trim() !== '') return declared.trim().toLowerCase();
  return 'application/octet-stream';
}

/** The media type without parameters, lower-cased: "Application/PDF; x=y" -> "application/pdf". */
export function mediaTypeEssence(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
