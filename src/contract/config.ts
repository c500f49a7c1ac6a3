import { z } from 'zod';
import {
  API_KEY_PREFIX,
  API_KEY_SYNTAX,
  CONNECTION_DEFAULTS,
  MAX_BALANCE_PAGES,
  DEFAULT_MAX_PAGES,
  MAX_ENGINE_FILE_BYTES,
  SERVE_PROFILES,
} from './constants.ts';
import { FaultRuleInput } from './emulator.ts';
import { FieldDefinition } from './fields.ts';

/**
 * The configuration file of `extract serve` (README: "Configuration"). A section left out is
 * `.prefault({})`: parsed as empty, so its fields' own defaults fill it (zod's `.default()` would
 * return a second copy of them unparsed).
 */

const WebhookAuth = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('none') }),
  z.strictObject({ type: z.literal('bearer'), token: z.string().min(1) }),
  z.strictObject({ type: z.literal('basic'), username: z.string().min(1), password: z.string() }),
]);
/** How a sender of events proves itself: what serve's integrations send and `extract listen` checks. */
export type WebhookAuth = z.infer<typeof WebhookAuth>;

export const WebhookIntegration = z.strictObject({
  /** Names the integration in the delivery log; defaults to its position ("webhook-1"). */
  id: z.string().min(1).optional(),
  url: z.url({ protocol: /^https?$/ }),
  method: z.enum(['POST', 'PUT']).default('POST'),
  auth: WebhookAuth.default({ type: 'none' }),
});
export type WebhookIntegration = z.infer<typeof WebhookIntegration>;

const ApiKey = z
  .string()
  .startsWith(API_KEY_PREFIX, `an API key starts with "${API_KEY_PREFIX}"`)
  .min(API_KEY_PREFIX.length + 8, 'an API key has at least 8 characters after its prefix')
  .regex(
    API_KEY_SYNTAX,
    'an API key is a bearer token: letters, digits and - . _ ~ + / after its prefix, then = padding',
  );

export const ParserConfig = z.strictObject({
  parser_id: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9_-]+$/, 'a parser_id is letters, digits, _ and -'),
  parser_name: z.string().min(1),
  api_keys: z.array(ApiKey).min(1, 'a parser needs at least one API key'),
  fields: FieldDefinition,
  webhooks: z.array(WebhookIntegration).default([]),
});
export type ParserConfig = z.infer<typeof ParserConfig>;

export const ServeProfileName = z.enum(SERVE_PROFILES);
export type ServeProfileName = z.infer<typeof ServeProfileName>;

/** The deployed service's platform limits, read by the deployed profile only (src/emulator/profile.ts). */
const DeployedLimits = z
  .strictObject({
    /**
     * A larger request body is answered 413 text/plain FUNCTION_PAYLOAD_TOO_LARGE before the
     * function runs: the serverless platform's request body cap ("4.5 MB"), counted in decimal
     * megabytes, the smaller reading, so a body that passes here passes there.
     */
    max_body_bytes: z.number().int().positive().default(4_500_000),
    /**
     * An inline request that takes longer (the extract function's maxDuration) is answered 504
     * text/plain FUNCTION_INVOCATION_TIMEOUT.
     */
    function_timeout_ms: z.number().int().positive().default(60_000),
    /** How long after such a time-out its reservation is refunded (the platform's clean-up job, 15-20 minutes on). */
    cleanup_after_ms: z.number().int().nonnegative().default(900_000),
    /** An attempt of the deployed webhook integration without a 2xx answer within this time counts as failed. */
    webhook_timeout_ms: z.number().int().positive().default(30_000),
  })
  .prefault({});

export const EmulatorConfig = z
  .strictObject({
    /** The service played: "interface" (the default) or "deployed" (what its deployed application does). */
    profile: ServeProfileName.default('interface'),
    /** The deployed profile's limits; the interface profile ignores them. */
    deployed: DeployedLimits,
    /** The account's balance in pages, when the data directory is new. */
    credits: z.number().int().nonnegative().max(MAX_BALANCE_PAGES).default(1000),
    inline: z
      .strictObject({
        timeout_ms: z.number().int().positive().default(30_000),
        max_body_bytes: z
          .number()
          .int()
          .positive()
          .default(10 * 1024 * 1024),
      })
      .prefault({}),
    /**
     * Whether POST extract honours Idempotency-Key (the spec never mentions one). false
     * rehearses a service that ignores it: every extract request is a new document and a charge.
     */
    idempotency_key: z.boolean().default(true),
    upload: z.strictObject({ expires_in: z.number().int().positive().default(900) }).prefault({}),
    processing: z
      .strictObject({
        /** Simulated engine time per page, on top of the real reading time. */
        ms_per_page: z.number().nonnegative().default(20),
        /** Documents extracted at once in the background. */
        concurrency: z.number().int().positive().default(2),
        /** A background extraction that takes longer is stopped, and the document fails (refunded). */
        timeout_ms: z.number().int().positive().default(600_000),
        /**
         * Each engine process's resident memory limit: a document that makes the reader hold more
         * (a decompression bomb) is stopped there and fails as unreadable (refunded; 422 inline).
         */
        engine_memory_mb: z.number().int().min(128).default(1024),
        /**
         * A background document's turn, in wall time (never its simulated time): after it, it gives
         * its `concurrency` place to the next and goes on; with every engine process busy and fresh
         * documents waiting, slow ones keep all processes but one (the longest-running is read again
         * later, from the start). Raise it when large honest documents get read twice.
         */
        slow_ms: z.number().int().positive().default(5000),
        /**
         * The rehearsal limit: a larger file is accepted and counted, then ends in error with its
         * credits refunded (as a failure does on the real service, which has no ceiling).
         */
        max_file_bytes: z.number().int().positive().max(MAX_ENGINE_FILE_BYTES).default(MAX_ENGINE_FILE_BYTES),
        /**
         * The rehearsal cap on a document's pages (the real service states none): a document with
         * more is refused when its pages are counted, before anything is charged (422 inline; the
         * document in error on the storage path), so no single document can hold the engine for hours.
         */
        max_pages: z.number().int().positive().default(DEFAULT_MAX_PAGES),
      })
      .prefault({}),
    webhook_delivery: z
      .strictObject({
        /** An attempt that has no 2xx answer within this time counts as failed. */
        timeout_ms: z.number().int().positive().default(10_000),
        /** Multiplies the retry schedule: 0.001 turns 5 minutes into 300 ms (tests, rehearsals). */
        time_scale: z.number().positive().default(1),
      })
      .prefault({}),
    /**
     * The HTTP server's connections (src/net/connections.ts): at most `max` open (the one idle longest
     * is closed to make room; when all are busy a new one is answered 503), an idle keep-alive
     * connection closed after `idle_timeout_ms`, headers due within `headers_timeout_ms`.
     */
    connections: z
      .strictObject({
        max: z.number().int().positive().default(CONNECTION_DEFAULTS.maxConnections),
        idle_timeout_ms: z.number().int().positive().default(CONNECTION_DEFAULTS.idleTimeoutMs),
        headers_timeout_ms: z.number().int().positive().default(CONNECTION_DEFAULTS.headersTimeoutMs),
      })
      .prefault({}),
    /** Faults injected from the start; more can be added at run time under /_emulator/faults. */
    faults: z
      .strictObject({ seed: z.number().int().optional(), rules: z.array(FaultRuleInput).default([]) })
      .prefault({}),
    parsers: z.array(ParserConfig).min(1, 'configure at least one parser'),
  })
  .superRefine((cfg, ctx) => {
    const ids = new Set<string>();
    const keys = new Set<string>();
    for (const [i, p] of cfg.parsers.entries()) {
      if (ids.has(p.parser_id))
        ctx.addIssue({ code: 'custom', path: ['parsers', i, 'parser_id'], message: 'used twice' });
      ids.add(p.parser_id);
      for (const [j, k] of p.api_keys.entries()) {
        if (keys.has(k)) {
          ctx.addIssue({
            code: 'custom',
            path: ['parsers', i, 'api_keys', j],
            message: 'an API key belongs to one parser only',
          });
        }
        keys.add(k);
      }
    }
  });
export type EmulatorConfig = z.output<typeof EmulatorConfig>;
export type EmulatorConfigInput = z.input<typeof EmulatorConfig>;
