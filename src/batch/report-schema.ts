import { z } from 'zod';
import { DocumentRecord } from '../outputs/record-schema.ts';

/**
 * The `--report FILE` of a batch run, as a zod schema: what docs/report.schema.json publishes
 * (`npm run docs`, scripts/report-schema.ts), for scripts that read the report (the cron recipe's
 * jq line). summary.ts builds the report; test/batch/report-schema.test.ts holds its type and
 * this schema to one shape both ways, and checks a real run's report against it.
 */

const EntryOutcome = z
  .enum(['completed', 'skipped', 'failed', 'left', 'unreadable', 'pending', 'not_submitted', 'planned', 'other_worker'])
  .describe(
    'completed: by this run. skipped: completed by an earlier run. failed: failed in this run. left: failed in an earlier run and not sent again (a failure set aside, or one that may have cost something, without --retry-failed). unreadable: the file could not be read. pending: still processing at the poll deadline. not_submitted: never sent (the run stopped first). planned: --dry-run. other_worker: completed during this run by another worker of a shared journal.',
  );

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

const StopReason = z.enum([
  'out_of_credits',
  'auth',
  'interrupted',
  'max_credits',
  'unreachable',
  'wrong_service',
  'journal',
]);

export const BatchReport = z
  .strictObject({
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
      z.strictObject({
        file: z.string(),
        changed_ms_ago: z.number(),
        reason: z.literal('partial download').optional(),
      }),
    ),
    other_workers: z.number().int(),
    pages_charged: z.number().int(),
    pages_recognised: z.number().int(),
    pages_refunded: z.number().int(),
    pages_unknown_documents: z.number().int(),
    pages_counted_by_client: z.number().int().optional(),
    stopped_by: StopReason.nullable(),
    message: z.string().nullable(),
    elapsed_ms: z.number(),
    dry_run: z.boolean(),
    credits_estimate: z.number().nullable(),
    needs_review: z.array(
      z.strictObject({ document_id: z.string().nullable(), file_name: z.string(), null_fields: z.array(z.string()) }),
    ),
    documents: z.array(ReportEntry),
  })
  .meta({
    title: 'extract --report',
    description: "A batch run's report (extract … --report FILE): its counts, then one entry per input document.",
  });

/** The JSON Schema of the report, as docs/report.schema.json holds it. */
export function reportJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(BatchReport, { unrepresentable: 'any', io: 'output' }), null, 2)}\n`;
}
