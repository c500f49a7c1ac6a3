/**
 * `npm run docs` (with cli-reference.ts): writes docs/report.schema.json, the JSON Schema of a
 * batch run's --report, from its zod schema (src/outputs/json-shapes.ts, the home of every JSON shape). test/batch/report-schema.test.ts
 * fails when the file is not what this writes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reportJsonSchema } from '../src/outputs/json-shapes.ts';

export const REPORT_SCHEMA_PATH = join(import.meta.dirname, '..', 'docs', 'report.schema.json');

if (import.meta.main) writeFileSync(REPORT_SCHEMA_PATH, reportJsonSchema());
