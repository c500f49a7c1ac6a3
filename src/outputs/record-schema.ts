import { z } from 'zod';
import { Results } from '../contract/index.ts';
import { DOCUMENT_ROUTES } from '../cost/rerun.ts';

/*
 * The record's zod schemas, apart from record.ts's constructors: only what validates a record
 * (the receiver's inbox, the journal's facts) imports this module, so a batch run that reads
 * its journal index and validates nothing loads no zod. record.ts re-exports the types.
 */

/**
 * One document's record, as every output writes it (batch client and webhook receiver).
 * `results` are exactly as the service returned them, nulls kept.
 */
export const Route = z.enum(DOCUMENT_ROUTES);
export type Route = z.infer<typeof Route>;

const RecordStatus = z.enum(['completed', 'error', 'pending', 'not_submitted']);

export const DocumentRecord = z.object({
  /** The path as the user gave it (or the file name the service reports, for receivers). */
  file: z.string(),
  document_id: z.string().nullable(),
  /**
   * completed: results are here. error: the document failed (the service said so, or it
   * could not be sent). pending: submitted and charged, not finished yet; a rerun (or
   * `extract get --wait`) collects it. not_submitted: never sent (the run stopped first).
   */
  status: RecordStatus,
  page_count: z.number().int().nonnegative().nullable(),
  results: Results.nullable(),
  error: z.string().nullable(),
  route: Route.nullable(),
  /**
   * Whether a person must look at it: completed with a null in its results (outputs/review.ts).
   * Null when it did not complete. Derived as the record is written (absent from stored records).
   */
  needs_review: z.boolean().nullable().optional(),
});
export type DocumentRecord = z.infer<typeof DocumentRecord>;
