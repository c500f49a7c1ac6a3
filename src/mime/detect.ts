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

/** The media type without parameters, lower-cased: "Application/PDF; x=y" -> "application/pdf". */
export function mediaTypeEssence(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}
