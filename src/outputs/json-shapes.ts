import { z } from 'zod';
import { FAILURE_CHARGES, UNCERTAIN_CAUSES } from '../cost/charge.ts';
import { DocumentRecord } from './record-schema.ts';

/*
 * What `--json` prints, every command's, as zod: the one home of these shapes. The types the
 * commands build them with come from here (z.infer), docs/json-schema.json is made from here
 * (z.toJSONSchema, `npm run docs`), and test/cli/json.proc.test.ts validates each command's real
 * output against it. Only the CLI's JSON paths and the docs script load this module (zod).
 */

/** An outcome of one document in a run (batch/summary.ts EntryOutcome). */
const EntryOutcome = z
  .enum(['completed', 'skipped', 'failed', 'left', 'unreadable', 'pending', 'not_submitted', 'planned', 'other_worker'])
  .describe(
    'completed: by this run. skipped: completed by an earlier run. failed: failed in this run. left: failed in an earlier run and not sent again (a failure set aside, or one that may have cost something, without --retry-failed). unreadable: the file could not be read. pending: still processing at the poll deadline. not_submitted: never sent (the run stopped first). planned: --dry-run. other_worker: completed during this run by another worker of a shared journal.',
  );

/** A document's record as a run ends it: the record every output writes, and what the run made of it. */
const ReportEntry = DocumentRecord.extend({
  outcome: EntryOutcome,
  sha256: z.string().nullable(),
  pages_estimate: z.number().optional(),
  pages_counted_by: z.literal('client').optional().describe("extract's own count, the service giving none"),
  set_aside: z
    .literal(true)
    .optional()
    .describe('a failure that will fail the same way again: outcome failed on the run that meets it, left after'),
  moved_to: z.string().optional().describe('where --move-done/--move-failed put the file'),
  move_error: z.string().optional().describe('why the file was not moved (it stays where it was)'),
}).strict();

/** The first event of a run or a watcher: what it was asked to do. */
const StartedEvent = z.object({
  event: z.literal('started'),
  command: z.enum(['extract', 'extract watch']),
  version: z.string(),
  /** The inputs (a run) or the folders (a watcher), as typed. */
  inputs: z.array(z.string()),
  /** ISO 8601, UTC. */
  at: z.string(),
});

/** One per document, as it ends (a dry run: as it is planned). */
const RecordEvent = z.object({ event: z.literal('record'), record: ReportEntry });

/** The run's counts: the report's summary (--report) without its per-document lists, which the record events gave. */
export const RunSummary = z.strictObject({
  exit_code: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int().describe('documents with outcome failed, left or unreadable'),
  known_failures: z.number().int().describe('of failed: set aside by an earlier run, which do not fail this one'),
  skipped: z.number().int(),
  pending: z.number().int(),
  not_submitted: z.number().int(),
  not_documents: z.array(z.strictObject({ file: z.string(), type: z.string() })),
  links_not_followed: z.array(z.strictObject({ file: z.string(), target: z.string(), reason: z.string() })),
  hidden: z.array(z.string()),
  still_changing: z.array(
    z.strictObject({ file: z.string(), changed_ms_ago: z.number(), reason: z.literal('partial download').optional() }),
  ),
  other_workers: z.number().int(),
  pages_charged: z.number().int(),
  pages_recognised: z.number().int(),
  pages_refunded: z.number().int(),
  pages_unknown_documents: z.number().int(),
  pages_counted_by_client: z.number().int().optional(),
  stopped_by: z
    .enum(['out_of_credits', 'auth', 'interrupted', 'max_credits', 'unreachable', 'wrong_service', 'journal'])
    .nullable(),
  message: z.string().nullable(),
  elapsed_ms: z.number(),
  dry_run: z.boolean(),
  credits_estimate: z.number().nullable(),
});

/** A batch run's --report FILE: the summary, the documents that need a person, and every document's entry. */
export const BatchReport = RunSummary.extend({
  needs_review: z.array(
    z.strictObject({ document_id: z.string().nullable(), file_name: z.string(), null_fields: z.array(z.string()) }),
  ),
  documents: z.array(ReportEntry),
}).meta({
  title: 'extract --report',
  description: "A batch run's report (extract … --report FILE): its counts, then one entry per input document.",
});

/** The JSON Schema of the report, as docs/report.schema.json holds it (`npm run docs`). */
export function reportJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(BatchReport, { unrepresentable: 'any', io: 'output' }), null, 2)}\n`;
}

/** The last event of a run that ended with a summary (any exit code but a command error's). */
const SummaryEvent = z.object({ event: z.literal('summary'), summary: RunSummary });

/** The last event of a watcher, stopped by a signal or by an error it cannot go on after. */
const StoppedEvent = z.object({ event: z.literal('stopped'), exit_code: z.number().int() });

/**
 * A command that fails in --json mode prints this one line on stdout, last; its exit code is
 * the one it has without --json (docs/exit-codes.md). stderr keeps people's text.
 */
export const ErrorEvent = z.object({
  event: z.literal('error'),
  error: z.object({
    /** src/errors.ts ErrorCode: usage, no_input, locked, out_of_credits, auth, state, unreachable, output, interrupted, internal. */
    code: z.string(),
    message: z.string(),
    exit_code: z.number().int(),
  }),
});

/** `extract --json` and `extract watch --json`: one of these per line of stdout (NDJSON). */
export const RunEvent = z.discriminatedUnion('event', [
  StartedEvent,
  RecordEvent,
  SummaryEvent,
  StoppedEvent,
  ErrorEvent,
]);

const StatusWorker = z.object({
  id: z.string(),
  host: z.string().nullable(),
  pid: z.number().int().nullable(),
  started: z.string().nullable(),
  last_seen: z.string().nullable(),
  finished: z.string().nullable(),
  alive: z.boolean(),
  holding: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  pages: z.number().int(),
});

const UncertainCause = z.enum(UNCERTAIN_CAUSES);

/** `extract status --json`: the journal's view (src/commands/status.ts). */
export const StatusView = z.object({
  journal: z.string(),
  documents: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  set_aside: z.number().int(),
  processing: z.number().int(),
  uncertain: z.number().int(),
  uncertain_causes: z.partialRecord(UncertainCause, z.number().int()),
  failed_uncertain: z.number().int(),
  pages_charged: z.number().int(),
  needs_review: z.number().int(),
  oldest_pending: z.object({ file: z.string(), document_id: z.string(), since: z.string() }).nullable(),
  failed_documents: z
    .array(
      z.object({
        file: z.string(),
        document_id: z.string().nullable(),
        error: z.string(),
        charge: z.enum(FAILURE_CHARGES),
        at: z.string(),
      }),
    )
    .optional(),
  uncertain_documents: z
    .array(
      z.object({
        file: z.string(),
        document_id: z.string().nullable(),
        pages: z.number().int().nullable(),
        state: z.enum(['in_flight', 'failed']),
        cause: UncertainCause.nullable(),
        why: z.string(),
        at: z.string(),
      }),
    )
    .optional(),
  review: z
    .array(
      z.object({
        document_id: z.string().nullable(),
        file_name: z.string(),
        null_fields: z.array(z.string()),
        at: z.string(),
      }),
    )
    .optional(),
  /** Every worker the journal knows (people's text shows the live ones and the last run's). */
  workers: z.array(StatusWorker),
});

/** `extract config get|set|unset KEY --json`: one key (the API key masked, a URL's password as ***). */
export const ConfigValue = z.object({
  key: z.string(),
  /** null: not set in the store. */
  value: z.string().nullable(),
  /** The environment variable set now that wins over the stored value, if any. */
  overridden_by: z.string().nullable(),
  path: z.string(),
});

/** `extract config list --json`: every stored key, masked as get shows it. */
export const ConfigList = z.object({ path: z.string(), values: z.record(z.string(), z.string()) });

/** `extract config path --json`. */
export const ConfigPath = z.object({ path: z.string() });

/** Every kind, by the name docs/json.md and docs/json-schema.json give it. */
export const JSON_SHAPES = {
  RunEvent,
  StartedEvent,
  RecordEvent,
  SummaryEvent,
  StoppedEvent,
  ErrorEvent,
  GetRecord: DocumentRecord,
  StatusView,
  ConfigValue,
  ConfigList,
  ConfigPath,
} as const;

/** docs/json-schema.json: each kind as JSON Schema (draft 2020-12) under $defs, a kind inside another by $ref. */
export function jsonSchemaDocument(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(JSON_SHAPES)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    uri: (id) => `#/$defs/${id}`,
    // The one custom type: a record's results, any JSON object (contract/results.ts).
    unrepresentable: 'any',
    override: (ctx) => {
      if (ctx.zodSchema._zod.def.type === 'custom')
        Object.assign(ctx.jsonSchema, {
          type: 'object',
          description: "the results as the service gave them: the parser's fields, nulls kept",
        });
    },
  });
  const defs: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _drop, $id: _id, ...rest } = schema as Record<string, unknown>;
    defs[id] = rest;
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'extract --json output',
    description:
      'What each command prints with --json (docs/json.md). Made by npm run docs from src/outputs/json-shapes.ts.',
    $defs: defs,
  };
}

export type RunEvent = z.infer<typeof RunEvent>;
export type RunSummary = z.infer<typeof RunSummary>;
export type ErrorEvent = z.infer<typeof ErrorEvent>;
export type StatusViewShape = z.infer<typeof StatusView>;
export type ConfigValue = z.infer<typeof ConfigValue>;
export type ConfigList = z.infer<typeof ConfigList>;
