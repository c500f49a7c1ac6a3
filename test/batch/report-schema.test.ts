import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { REPORT_SCHEMA_PATH } from '../../scripts/report-schema.ts';
import { BatchReport, reportJsonSchema } from '../../src/outputs/json-shapes.ts';
import { type BatchSummary, type ReportEntry, reportChunks, tallySummary } from '../../src/batch/summary.ts';

/**
 * The report's published schema (docs/report.schema.json): one shape with what summary.ts
 * writes, and the file is what `npm run docs` makes of it.
 */
describe('report schema', () => {
  it('is the type summary.ts builds, both ways', () => {
    // A field added to BatchSummary or ReportEntry and not here (or the other way) fails the type check.
    expectTypeOf<z.infer<typeof BatchReport>>().toExtend<BatchSummary>();
    expectTypeOf<BatchSummary>().toExtend<z.infer<typeof BatchReport>>();
  });

  it('docs/report.schema.json is current (npm run docs writes it)', () => {
    expect(readFileSync(REPORT_SCHEMA_PATH, 'utf8')).toBe(reportJsonSchema());
  });

  it("accepts a run's report as written, every outcome and optional field in it", () => {
    const entry = (file: string, extra: Partial<ReportEntry>): ReportEntry => ({
      file,
      document_id: `doc_${file}`,
      status: 'error',
      page_count: 1,
      results: null,
      error: 'the service could not read it',
      route: 'inline',
      outcome: 'failed',
      sha256: 'ab'.repeat(32),
      ...extra,
    });
    const documents: ReportEntry[] = [
      entry('a.pdf', { status: 'completed', results: { total: null }, error: null, outcome: 'completed' }),
      entry('b.pdf', { outcome: 'left', set_aside: true, moved_to: '/srv/failed/b.pdf' }),
      entry('c.pdf', { outcome: 'failed', set_aside: true, pages_counted_by: 'client', move_error: 'EXDEV' }),
      entry('d.pdf', { status: 'not_submitted', document_id: null, outcome: 'planned', pages_estimate: 3 }),
    ];
    const summary = tallySummary(documents, {
      stoppedBy: null,
      message: null,
      elapsedMs: 12,
      dryRun: false,
      charges: { reserved: 3, refunded: 1, unknown: 0, recognised: 0, byClient: 1 },
      hidden: ['.DS_Store'],
      unsettled: [{ file: 'e.pdf.part', changed_ms_ago: 10, reason: 'partial download' }],
    });
    const written = JSON.parse([...reportChunks(summary)].join(''));
    expect(BatchReport.parse(written)).toEqual(written);
    expect(() => BatchReport.parse({ ...written, a_field_not_in_the_schema: 1 })).toThrow();
  });
});
