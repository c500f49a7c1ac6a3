import type { EmulatorConfig, FieldDefinition, Results, ResultValue, ServeProfileName } from '../contract/index.ts';
import { RETRY_SCHEDULE_MS } from './webhooks/dispatcher.ts';

/**
 * Which service `extract serve` plays, as rules the routes, the gateway and the webhooks consult:
 * the one the interface describes (the default), or the one its public source shows deployed
 * (docs/serve-profiles.md lists every difference and the source file it comes from). The only
 * place that knows the two apart.
 */
export type Profile = {
  readonly name: ServeProfileName;
  /** Operations of the API the service has; without one, its path is the framework's 404 page. */
  offers(operation: ApiOperation): boolean;
  readonly inline: {
    /** A larger request body is refused (413) before anything runs. */
    maxBodyBytes: number;
    /** The whole request's deadline, page counting included. */
    timeoutMs: number;
    /**
     * When a timed-out request's reservation is refunded: null at once (interface: 503, refunded),
     * else that many ms later (deployed: the platform stops the function, a clean-up job refunds).
     */
    refundAfterMs: number | null;
    /** Whether a failed extraction is an HTTP error (interface) or a 200 answer that says so (deployed). */
    failureAnswered: boolean;
    /**
     * Documents of at most this many pages whose extraction failed answer success: true with every
     * field missing (refunded all the same); 0 for none. The deployed route's fallback for short documents.
     */
    blankAnswerMaxPages: number;
  };
  /** Whether POST extract honours Idempotency-Key (also subject to the config's idempotency_key). */
  readonly idempotencyKey: boolean;
  /** What a missing value is in answers and webhook events: null (interface) or the marker (deployed). */
  readonly missing: null | typeof DEPLOYED_MISSING;
  /** Whether the API's error bodies are `{ error }` alone (deployed), not the emulator's `{ success, error, code }`. */
  readonly bareErrors: boolean;
  /** Whether the platform answers (413, 504, unknown paths) as itself: text and HTML, not the API's JSON. */
  readonly platformAnswers: boolean;
  /** Whether a Host starting with `www.` is redirected (308) to the apex. */
  readonly redirectWww: boolean;
  readonly webhooks: {
    /** Waits before each retry (after attempt 1, 2, ...); attempts = retries + 1. */
    retryScheduleMs: readonly number[];
    timeoutMs: number;
    /** Whether a 4xx answer is retried (interface: any non-2xx is), or ends the delivery (deployed). */
    retryClientErrors: boolean;
    userAgent: string;
    /** The integration's test action: its document id, and whether its payload says `"test": true`. */
    testDocumentId(nowMs: number, newId: (prefix: string) => string): string;
    testMarked: boolean;
  };
};

/** The API operations a profile may lack. */
type ApiOperation = 'upload-url' | 'extract-stored' | 'documents';

/** The deployed service's missing value, leaves and tables alike. */
const DEPLOYED_MISSING = '-';

/** The profile a configuration names. */
export function profileOf(config: EmulatorConfig): Profile {
  return config.profile === 'deployed' ? deployed(config) : interfaceProfile(config);
}

function interfaceProfile(config: EmulatorConfig): Profile {
  return {
    name: 'interface',
    offers: () => true,
    inline: {
      maxBodyBytes: config.inline.max_body_bytes,
      timeoutMs: config.inline.timeout_ms,
      refundAfterMs: null,
      failureAnswered: false,
      blankAnswerMaxPages: 0,
    },
    idempotencyKey: true,
    missing: null,
    bareErrors: false,
    platformAnswers: false,
    redirectWww: false,
    webhooks: {
      retryScheduleMs: RETRY_SCHEDULE_MS,
      timeoutMs: config.webhook_delivery.timeout_ms,
      retryClientErrors: true,
      userAgent: 'extract-serve-webhooks/1',
      testDocumentId: (_nowMs, newId) => newId('doc_test'),
      testMarked: true,
    },
  };
}

/**
 * The deployed application (ByteBeamLLC/extractor at d05bb29): app/api/v1/extract/route.ts,
 * lib/extraction-results.ts, lib/extractor/integrations/webhookDelivery.ts, next.config.mjs.
 */
function deployed(config: EmulatorConfig): Profile {
  const limits = config.deployed;
  return {
    name: 'deployed',
    // Only inline POST /api/v1/extract is routed; upload-url and documents/{id} are not.
    offers: () => false,
    inline: {
      maxBodyBytes: limits.max_body_bytes,
      timeoutMs: limits.function_timeout_ms,
      refundAfterMs: limits.cleanup_after_ms,
      failureAnswered: true,
      blankAnswerMaxPages: 5,
    },
    idempotencyKey: false,
    missing: DEPLOYED_MISSING,
    bareErrors: true,
    platformAnswers: true,
    redirectWww: true,
    webhooks: {
      // Three attempts: at once, then 1 s and 2 s later.
      retryScheduleMs: [1_000, 2_000],
      timeoutMs: limits.webhook_timeout_ms,
      retryClientErrors: false,
      userAgent: 'Parsli/1.0',
      testDocumentId: (nowMs) => `test-${nowMs}`,
      testMarked: false,
    },
  };
}

/** Results with every missing value (null) as `marker`: leaves, table cells and whole tables. */
export function markMissing(results: Results, marker: Profile['missing']): Results {
  if (marker === null) return results;
  const mark = (value: ResultValue): ResultValue => {
    if (value === null) return marker;
    if (Array.isArray(value)) return value.map((row) => markMissing(row, marker));
    if (typeof value === 'object') return markMissing(value, marker);
    return value;
  };
  return Object.fromEntries(Object.entries(results).map(([name, value]) => [name, mark(value)]));
}

/** Results in which every field is `marker`: objects of markers, tables a marker. */
export function blankResults(fields: FieldDefinition, marker: string): Results {
  return Object.fromEntries(fields.map((f) => [f.name, f.type === 'object' ? blankResults(f.fields, marker) : marker]));
}
