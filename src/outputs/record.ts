import type { DocumentRecord } from './record-schema.ts';
import { needsReview } from './review.ts';

/**
 * A record's shape is the zod schema in record-schema.ts (the receiver validates stored records
 * with it); this module takes only its types, so a batch run that validates nothing loads no zod.
 */
export type { DocumentRecord, Route } from './record-schema.ts';

export type OutputFormat = 'json' | 'jsonl' | 'csv' | 'dir';

/**
 * Who a record is about: the file, the service's id once known, and the route it took (or
 * would take). The constructors below add what the status implies, so no caller writes the
 * nulls of a status by hand (a completed record has no error, a not-sent one no pages).
 */
export type RecordOrigin = Pick<DocumentRecord, 'file' | 'document_id' | 'route'>;

/** Finished: the results exactly as the service gave them (null only if it sent none). */
export function completedRecord(
  origin: RecordOrigin,
  pageCount: number | null,
  results: DocumentRecord['results'],
): DocumentRecord {
  return { ...origin, status: 'completed', page_count: pageCount, results, error: null };
}

/** The error of a document the service says failed without saying why. */
export const UNEXPLAINED_ERROR = 'the service reported an error without an explanation';

/** Failed (the service said so, or it could not be sent); `error` says why. */
export function errorRecord(
  origin: RecordOrigin,
  error: string,
  pageCount: number | null = null,
  results: DocumentRecord['results'] = null,
): DocumentRecord {
  return { ...origin, status: 'error', page_count: pageCount, results, error };
}

/** Submitted and charged, not finished yet; `why` tells how it will be collected. */
export function pendingRecord(origin: RecordOrigin, why: string, pageCount: number | null = null): DocumentRecord {
  return { ...origin, status: 'pending', page_count: pageCount, results: null, error: why };
}

/** Never sent (the run stopped first, or a dry run only planned it). */
export function notSubmittedRecord(origin: Omit<RecordOrigin, 'document_id'>, why: string | null): DocumentRecord {
  return { ...origin, document_id: null, status: 'not_submitted', page_count: null, results: null, error: why };
}

/**
 * Every key of a record, in the one order every output writes them: scalars first, results last.
 * Typed over the schema's keys, so TypeScript refuses a key missing here or unknown to it.
 */
const RECORD_KEY_ORDER: Record<keyof DocumentRecord, true> = {
  file: true,
  document_id: true,
  status: true,
  page_count: true,
  route: true,
  error: true,
  needs_review: true,
  results: true,
};
export const RECORD_KEYS = Object.keys(RECORD_KEY_ORDER) as readonly (keyof DocumentRecord)[];

/**
 * The record's own fields, of anything that extends one (a run's report entries carry more),
 * in RECORD_KEYS's order (`results` may be given in place of the record's own, as the JSON
 * Lines writer does to splice stored text).
 */
export function recordFields(r: DocumentRecord, results: DocumentRecord['results'] = r.results): DocumentRecord {
  // One literal, written out: a spread and a pair per key were most of what a rerun's
  // writer allocated per record. Required<>: a key added to the schema must be added here.
  const own: Required<DocumentRecord> = {
    file: r.file,
    document_id: r.document_id,
    status: r.status,
    page_count: r.page_count,
    route: r.route,
    error: r.error,
    needs_review: needsReview(r),
    results,
  };
  return own;
}
