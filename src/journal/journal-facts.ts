import { z } from 'zod';
import { FAILURE_CHARGES, UNCERTAIN_CAUSES } from '../cost/charge.ts';
import { Results } from '../contract/index.ts';
import { Route } from '../outputs/record-schema.ts';

/**
 * The journal's facts as a zod schema (journal.ts says what they mean; journal-read.ts validates
 * journal text against it). Kept apart from journal.ts and imported with `await import()`
 * only where text must be validated (a full replay, facts after the index's offset, `status`):
 * a rerun whose journal index is current validates nothing, and so never loads zod
 * (test/cli/startup.proc.test.ts). The PostgreSQL backend imports it statically; it loads pg anyway.
 */

const Common = { at: z.string(), sha256: z.string(), target: z.string(), file: z.string() };

/**
 * The extract request as sent, so that a resend after an uncertain outcome (a crash, a
 * dropped connection) is the same request under the same Idempotency-Key: a service that
 * honours the key answers it with the first document and charges nothing more. The
 * storage-path shape resends the same storage path rather than uploading again.
 */
export const SentRequest = z.object({
  idempotency_key: z.string(),
  file_name: z.string(),
  file_type: z.string(),
  storage_path: z.string().optional(),
});
export type SentRequest = z.infer<typeof SentRequest>;

/** What a failure cost: the values cost/charge.ts defines (its FailureCharge), as every journal has written them. */
const FailureCharge = z.enum(FAILURE_CHARGES);

/**
 * The document of this content whose pages a run already counted as charged, kept on the facts
 * that would otherwise hide it (a resend's `sending`, a `failed`): a service that answers a later
 * resend with this document_id charged nothing more (cost/rerun.ts countedEarlier).
 */
const Counted = z.object({ document_id: z.string(), page_count: z.number().int().nonnegative() });

/** Why an extract request was left uncertain, as the run saw it (cost/charge.ts UncertainCause). */
const Cause = z.enum(UNCERTAIN_CAUSES);

export const JournalFact = z.discriminatedUnion('fact', [
  /**
   * An extract request is about to be sent. Without a later fact, a crash (SIGKILL, power)
   * happened while it was in flight: the document may have been charged, and there is no
   * document_id to look it up, so a rerun reports it rather than paying twice; with
   * --retry-failed it resends `request` unchanged. (`request` is absent in older journals.)
   */
  z.object({
    fact: z.literal('sending'),
    ...Common,
    route: Route,
    request: SentRequest.optional(),
    counted: Counted.optional(),
  }),
  /** The extract request was answered without creating a document (402, 503...): nothing was charged. */
  z.object({ fact: z.literal('unsent'), ...Common, route: Route }),
  /**
   * The service returned a document_id: from now on the document is paid for. Written again
   * with `page_count` when a run ends with the document still processing and knows its pages:
   * that run counted them in its "pages charged", so the run that collects it does not.
   */
  z.object({
    fact: z.literal('submitted'),
    ...Common,
    route: Route,
    document_id: z.string(),
    page_count: z.number().int().nonnegative().nullable().optional(),
  }),
  z.object({
    fact: z.literal('completed'),
    ...Common,
    route: Route,
    document_id: z.string(),
    page_count: z.number().int().nonnegative().nullable(),
    /** `client`: the service gave no page count, so the pages are the client's own count (batch/plan/pages.ts). */
    pages_counted_by: z.literal('client').optional(),
    results: Results,
  }),
  z.object({
    fact: z.literal('failed'),
    ...Common,
    route: Route.nullable(),
    document_id: z.string().nullable(),
    reason: z.string(),
    /** Whether the same document may succeed on a later try. */
    retryable: z.boolean(),
    /** What the failure cost (absent in older journals: see cost/charge.ts chargeOf). */
    charge: FailureCharge.optional(),
    /** Set when the extract request may have reached the service unanswered: --retry-failed resends it unchanged. */
    request: SentRequest.optional(),
    /** With charge `uncertain`: how the request was left uncertain (absent in older journals). */
    cause: Cause.optional(),
    counted: Counted.optional(),
  }),
  /** Written by older versions for --fresh: facts before this line are ignored. No longer written. */
  z.object({ fact: z.literal('reset'), at: z.string() }),
  /**
   * What an API key is known to be, learned without paying (journal/identity.ts): `target` is the
   * key's fingerprint (of base URL and key), `parser` the target its parser's documents are
   * journaled under (the fingerprint of the first key seen for that parser, or its own), and
   * `not` the targets this key was shown not to see (another parser's).
   */
  z.object({
    fact: z.literal('parser'),
    at: z.string(),
    target: z.string(),
    parser: z.string(),
    not: z.array(z.string()).optional(),
    /**
     * What the service at this target offers, learnt without paying (client/offers.ts): a route
     * it lacks, the largest inline body it takes. Absent: what the interface promises.
     */
    offers: z
      .object({
        upload: z.literal(false).optional(),
        documents: z.literal(false).optional(),
        inline_body_max: z.number().int().positive().optional(),
      })
      .optional(),
  }),
  /** The journal's format version, the first line of a journal this version made (absent: 1). */
  z.object({ fact: z.literal('journal'), at: z.string(), version: z.number().int().positive() }),
]);
export type JournalFact = z.infer<typeof JournalFact>;
