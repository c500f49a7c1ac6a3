import { z } from 'zod';
import { DocumentStatus } from './api.ts';
import { MAX_TOP_UP_PAGES } from './constants.ts';
import { Results } from './results.ts';
import { SourceType } from './webhook.ts';

export { MAX_BALANCE_PAGES } from './constants.ts';

/** Shapes of the emulator's own surface under /_emulator/ (not part of the emulated API). */

export const EMULATOR_PREFIX = '/_emulator';

/** What moved credits: a document's reservation, its refund, a top-up. */
export const LedgerKind = z.enum(['reserve', 'refund', 'topup']);

export const LedgerEntry = z.object({
  kind: LedgerKind,
  document_id: z.string().nullable(),
  file_name: z.string().nullable(),
  sha256: z.string().nullable(),
  pages: z.number().int(),
  at: z.string(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const LedgerBody = z.object({ balance: z.number().int(), entries: z.array(LedgerEntry) });
export type LedgerBody = z.infer<typeof LedgerBody>;

export const TopUpRequest = z.object({
  pages: z.number().int().positive().max(MAX_TOP_UP_PAGES, `at most ${MAX_TOP_UP_PAGES} pages per top-up`),
});

export const DeliveryState = z.enum(['pending', 'delivered', 'failed']);

const DeliveryAttempt = z.object({
  attempt: z.number().int().positive(),
  at: z.string(),
  /** The receiver's HTTP status, or null when no answer came (network error, time-out). */
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  latency_ms: z.number().int().nonnegative(),
  /** The first bytes of the receiver's answer. */
  response_excerpt: z.string().nullable(),
});

export const Delivery = z.object({
  delivery_id: z.string(),
  event_id: z.string(),
  document_id: z.string(),
  parser_id: z.string(),
  integration_id: z.string(),
  test: z.boolean(),
  state: DeliveryState,
  next_attempt_at: z.string().nullable(),
  created_at: z.string(),
  attempts: z.array(DeliveryAttempt),
});
export type Delivery = z.infer<typeof Delivery>;

export const DeliveriesBody = z.object({ deliveries: z.array(Delivery) });

export const DeliveriesQuery = z.object({
  integration: z.string().optional(),
  document_id: z.string().optional(),
  outcome: DeliveryState.optional(),
  limit: z.coerce.number().int().positive().max(5000).optional(),
});

export type DeliveriesQuery = z.infer<typeof DeliveriesQuery>;

export const RecoverRequest = z.object({ since: z.iso.datetime({ offset: true }) });

/** A document as the application shows it: the API's view plus how it arrived and when. */
export const AppDocument = z.object({
  document_id: z.string(),
  parser_id: z.string(),
  status: DocumentStatus,
  file_name: z.string(),
  mime_type: z.string(),
  source_type: SourceType,
  page_count: z.number().int().nullable(),
  results: Results.nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type AppDocument = z.infer<typeof AppDocument>;

/** Where a value stands in the document: its page (from 1) and box [x0, top, x1, bottom] in PDF points, origin top left. */
const Place = z.strictObject({
  page: z.number().int().positive(),
  box: z.tuple([z.number(), z.number(), z.number(), z.number()]),
});
/** Where each grounded value was found, by path ("total", "vendor.name", "line_items[0].amount"). */
export const Grounding = z.record(z.string(), Place);
export type Grounding = z.infer<typeof Grounding>;

/**
 * One document on the emulator's own surface (GET /_emulator/documents/{id}): the list's
 * facts and, once completed, where each value was found. The public API's results never
 * carry it; the hosted service shows no such thing (spec: not shown).
 */
/** Why pages were not read, or read as nothing (no text layer and no OCR result, OCR's budgets), in the user's words. */
export const ReadingNotes = z.array(z.string());
/** notes: empty when every page was read; for a failed document, which limit stopped it. The public API's answer never carries them. */
export const AppDocumentDetail = AppDocument.extend({
  grounding: Grounding.nullable(),
  notes: ReadingNotes,
  file_url: z.string(),
});
export type AppDocumentDetail = z.infer<typeof AppDocumentDetail>;

const DocumentsPage = z.object({
  total: z.number().int(),
  offset: z.number().int(),
  documents: z.array(AppDocument),
});
export type DocumentsPage = z.infer<typeof DocumentsPage>;

export const DocumentsQuery = z.object({
  offset: z.coerce.number().int().nonnegative().default(0),
  limit: z.coerce.number().int().positive().max(500).default(50),
  status: DocumentStatus.optional(),
});
export type DocumentsQuery = z.infer<typeof DocumentsQuery>;

/** Fault injection (README: "Fault injection"). */
export const FaultOperation = z.enum([
  'upload-url',
  'upload',
  'extract-inline',
  'extract-async',
  'documents',
  'webhook',
]);
export type FaultOperation = z.infer<typeof FaultOperation>;

/** The statuses a `status` effect may answer with (429 carries Retry-After). */
export const FAULT_STATUSES = [429, 500, 502, 503] as const;

export const FaultEffect = z.discriminatedUnion('type', [
  /** Answer with this status and a JSON error instead of handling the request (429 carries Retry-After). */
  z.strictObject({
    type: z.literal('status'),
    status: z.literal(FAULT_STATUSES),
    retry_after: z.number().int().nonnegative().default(1),
  }),
  /** Wait before handling: `ms`, or a random time between min_ms and max_ms. */
  z.strictObject({
    type: z.literal('latency'),
    ms: z.number().int().nonnegative().optional(),
    min_ms: z.number().int().nonnegative().optional(),
    max_ms: z.number().int().nonnegative().optional(),
  }),
  /** Drop the connection: before handling (nothing happened), or after (the work was done, the answer is lost). */
  z.strictObject({ type: z.literal('reset'), when: z.enum(['before', 'after']).default('before') }),
  /** Handle the request, then send only the first half of the answer and close. */
  z.strictObject({ type: z.literal('truncate') }),
  /** Accept the request and never answer; the connection is closed after `ms`. */
  z.strictObject({ type: z.literal('stall'), ms: z.number().int().positive().default(30_000) }),
  /** extract-async only: the document ends in error (refunded). */
  z.strictObject({ type: z.literal('async_error'), message: z.string().default('injected fault: extraction failed') }),
  /** webhook only: the attempt is not sent and counts as failed (retried on schedule). */
  z.strictObject({ type: z.literal('drop') }),
  /** webhook only: the event is sent twice. */
  z.strictObject({ type: z.literal('duplicate') }),
  /** webhook only: the attempt waits `ms` first (later events overtake it: a reorder). */
  z.strictObject({ type: z.literal('delay'), ms: z.number().int().nonnegative().default(1000) }),
]);
export type FaultEffect = z.infer<typeof FaultEffect>;

/**
 * Fault injection in words: what each operation is, each effect's label, its parameters and the
 * operations it applies to (null: any). The one copy: the emulator serves it to the app
 * (GET /_emulator/faults/vocabulary) and checks rules against it.
 */
export const FAULT_VOCABULARY = {
  operations: {
    'upload-url': 'upload address',
    upload: 'signed PUT of the bytes',
    'extract-inline': 'inline extract',
    'extract-async': 'storage-path extract',
    documents: 'get a document',
    webhook: 'outbound webhook',
  } satisfies Record<FaultOperation, string>,
  effects: {
    status: { label: 'HTTP error status', params: ['status'], only: null },
    latency: { label: 'Added latency', params: ['ms'], only: null },
    reset: { label: 'Connection reset', params: ['when'], only: null },
    truncate: { label: 'Truncated answer', params: [], only: null },
    stall: { label: 'Stall (never answer)', params: ['stall_ms'], only: null },
    async_error: { label: 'Document ends in error', params: ['message'], only: ['extract-async'] },
    drop: { label: 'Drop the attempt', params: [], only: ['webhook'] },
    duplicate: { label: 'Send twice', params: [], only: ['webhook'] },
    delay: { label: 'Delay (reorder)', params: ['ms'], only: ['webhook'] },
  } satisfies Record<FaultEffect['type'], { label: string; params: string[]; only: FaultOperation[] | null }>,
  statuses: FAULT_STATUSES,
};

const FaultRuleFields = z.strictObject({
  operation: FaultOperation,
  /** Chance that a matching request gets the effect, 0..1. */
  probability: z.number().min(0).max(1).default(1),
  effect: FaultEffect,
  /** Apply at most this many times, then the rule retires. */
  times: z.number().int().positive().optional(),
});
/** A rule whose effect cannot happen on its operation (a webhook drop on GET documents) is refused, not kept idle. */
export const FaultRuleInput = FaultRuleFields.superRefine((rule, ctx) => {
  const only: readonly FaultOperation[] | null = FAULT_VOCABULARY.effects[rule.effect.type].only;
  if (only !== null && !only.includes(rule.operation))
    ctx.addIssue({
      code: 'custom',
      path: ['effect', 'type'],
      message: `the effect ${rule.effect.type} applies only to ${only.join(', ')}, not to ${rule.operation}`,
    });
});
export type FaultRuleInput = z.input<typeof FaultRuleInput>;
export const FaultRule = FaultRuleFields.extend({ id: z.string(), applied: z.number().int().nonnegative() });
export type FaultRule = z.infer<typeof FaultRule>;
