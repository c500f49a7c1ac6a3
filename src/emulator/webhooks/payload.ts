import {
  WEBHOOK_EVENT,
  WebhookPayload,
  type Field,
  type FieldDefinition,
  type LeafType,
  type ParserConfig,
  type Results,
} from '../../contract/index.ts';
import type { DocumentRow } from '../documents.ts';
import { markMissing, type Profile } from '../profile.ts';

/**
 * The document.processed payload (spec, "Events" > "Payload"), validated against the
 * contract before it is stored, so a malformed event never leaves the emulator.
 */
export function processedPayload(parser: ParserConfig, doc: DocumentRow, missing: Profile['missing']): WebhookPayload {
  return WebhookPayload.parse({
    event: WEBHOOK_EVENT,
    parser_id: parser.parser_id,
    parser_name: parser.parser_name,
    document_id: doc.document_id,
    timestamp: new Date(doc.finished_at ?? doc.created_at).toISOString(),
    data: markMissing(doc.results ?? {}, missing),
    metadata: {
      file_name: doc.file_name,
      mime_type: doc.mime_type,
      source_type: doc.source_type,
      page_count: doc.page_count ?? 0,
    },
  });
}

const SAMPLE: Record<LeafType, string | number | boolean> = {
  string: 'sample text',
  decimal: 1234.5,
  integer: 3,
  date: '2025-03-04',
  boolean: true,
  email: 'billing@example.com',
  phone: '+44 20 7946 0000',
  currency: 'EUR',
};

function sampleOf(fields: FieldDefinition): Results {
  const out: Results = {};
  for (const f of fields) out[f.name] = sampleField(f);
  return out;
}

function sampleField(f: Field): Results[string] {
  if (f.type === 'object') return sampleOf(f.fields);
  if (f.type === 'table') return [sampleOf(f.columns)];
  return SAMPLE[f.type];
}

/** The integration's test action: a sample of the parser's shape, marked `"test": true` when `marked`. */
export function testPayload(parser: ParserConfig, documentId: string, nowMs: number, marked: boolean): WebhookPayload {
  return WebhookPayload.parse({
    event: WEBHOOK_EVENT,
    ...(marked && { test: true }),
    parser_id: parser.parser_id,
    parser_name: parser.parser_name,
    document_id: documentId,
    timestamp: new Date(nowMs).toISOString(),
    data: sampleOf(parser.fields),
    metadata: { file_name: 'sample.pdf', mime_type: 'application/pdf', source_type: 'api', page_count: 1 },
  });
}
