import { renderPdf, type Sheet } from '../../fixtures/lib/pdf.ts';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';

/** A synthetic page drawn as a PDF and read by the engine in process: the built-in Invoices fields unless others are given. */
export async function readSheet(sheet: Sheet, fields: FieldDefinition = INVOICE_FIELDS) {
  const bytes = await renderPdf([sheet]);
  return (await extractInProcess({ bytes: new Uint8Array(bytes), mimeType: 'application/pdf', fields })).results;
}
