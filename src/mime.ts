/** The sniffing libraries (src/sniffers.ts), loaded on the first file sniffed. */
let sniffers: Promise<typeof import('./sniffers.ts')> | undefined;

/**
 * A document's MIME type from its content first (magic bytes, via file-type), then its
 * file name's extension (mime-types), then what the sender declared. Text formats have
 * no magic bytes, so for them the extension decides.
 */
export async function detectMimeType(head: Uint8Array, fileName: string, declared?: string): Promise<string> {
  sniffers ??= import('./sniffers.ts');
  const { fileTypeFromBuffer, mime } = await sniffers;
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
