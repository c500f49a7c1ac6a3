import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import type { z } from 'zod';
import { JSON_SCHEMA_PATH } from '../../scripts/cli-reference.ts';
import {
  ConfigList,
  ConfigPath,
  ConfigValue,
  ErrorEvent,
  JSON_SHAPES,
  jsonSchemaDocument,
  RunEvent,
  StatusView,
} from '../../src/outputs/json-shapes.ts';
import { DocumentRecord } from '../../src/outputs/record-schema.ts';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { extract, serveForFile } from '../e2e/batch-helpers.ts';
import { dropDir, dropInvoices, startWatch, until } from '../e2e/watch-helpers.ts';

/**
 * `--json` for scripts (docs/json.md): each command's real output, from the built CLI, parsed by
 * the one zod home of the shapes (src/outputs/json-shapes.ts), from which docs/json-schema.json
 * is made. An error in --json mode is one JSON line on stdout, with the exit code unchanged.
 */
const service = serveForFile();

/** Every non-empty line of `text`, each parsed by `schema` (a line that does not fit fails the test with zod's words). */
function linesOf<S extends z.ZodType>(text: string, schema: S): z.infer<S>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => schema.parse(JSON.parse(l)));
}

async function invoices(cwd: string, n: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= n; i++) {
    writeFileSync(join(cwd, `i${i}.pdf`), await invoicePdf(700 + i));
    names.push(`i${i}.pdf`);
  }
  return names;
}

describe('--json (built CLI), validated against the documented schema', () => {
  it('docs/json-schema.json is what npm run docs makes from the zod shapes, a definition per kind', () => {
    const written = JSON.parse(readFileSync(JSON_SCHEMA_PATH, 'utf8')) as { $defs: Record<string, unknown> };
    expect(written, 'docs/json-schema.json is stale: run npm run docs').toEqual(jsonSchemaDocument());
    expect(Object.keys(written.$defs).sort()).toEqual(Object.keys(JSON_SHAPES).sort());
  });

  it('the batch: NDJSON events on stdout (started, a record per document, the summary); records still go to -o', async () => {
    const cwd = tempDir();
    const names = await invoices(cwd, 2);
    const r = await extract(cwd, service(), [...names, '--json', '-o', 'out.csv', '--state', 'j.sqlite']);
    expect(r.exitCode, r.stderr).toBe(0);
    const events = linesOf(r.stdout, RunEvent);
    expect(events.map((e) => e.event)).toEqual(['started', 'record', 'record', 'summary']);
    const records = events.flatMap((e) => (e.event === 'record' ? [e.record] : []));
    expect(records.map((x) => [x.file, x.status, x.outcome]).sort()).toEqual([
      ['i1.pdf', 'completed', 'completed'],
      ['i2.pdf', 'completed', 'completed'],
    ]);
    const last = events.at(-1)!;
    expect(last.event === 'summary' && last.summary).toMatchObject({ exit_code: 0, completed: 2 });
    expect(readFileSync(join(cwd, 'out.csv'), 'utf8').trim().split('\n')).toHaveLength(3);

    // A rerun: each document's record again (skipped), a dry run: planned records and the estimate.
    const again = await extract(cwd, service(), [...names, '--json', '-o', 'out.csv', '--state', 'j.sqlite']);
    const outcomes = linesOf(again.stdout, RunEvent).flatMap((e) => (e.event === 'record' ? [e.record.outcome] : []));
    expect(outcomes).toEqual(['skipped', 'skipped']);
    const dry = await extract(cwd, service(), [...names, '--json', '--dry-run', '--no-state']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    const planned = linesOf(dry.stdout, RunEvent);
    expect(planned.filter((e) => e.event === 'record').map((e) => e.event === 'record' && e.record.outcome)).toEqual([
      'planned',
      'planned',
    ]);
    const summary = planned.at(-1)!;
    expect(summary.event === 'summary' && summary.summary.credits_estimate).toBe(2);
  });

  it("an error in --json mode: one error line on stdout, people's line on stderr, the exit code unchanged", async () => {
    const cwd = tempDir();
    const missing = await extract(cwd, service(), ['nothing-here.pdf', '--json', '--no-state']);
    expect(missing.exitCode).toBe(2);
    const events = linesOf(missing.stdout, RunEvent);
    expect(events.at(-1)).toMatchObject({ event: 'error', error: { code: 'no_input', exit_code: 2 } });
    expect(missing.stderr).toContain('no input file matched');

    // commander's own refusals too, and --json beside another stream on stdout.
    const bad = await extract(cwd, service(), ['get', 'doc_x', '--json', '--no-such-flag']);
    expect(bad.exitCode).toBe(2);
    expect(ErrorEvent.parse(JSON.parse(bad.stdout))).toMatchObject({ error: { code: 'usage' } });
    const shared = await extract(cwd, service(), ['i.pdf', '--json', '--report', '-']);
    expect(shared.exitCode).toBe(2);
    expect(ErrorEvent.parse(JSON.parse(shared.stdout)).error.message).toMatch(/--report - would share it/);
  });

  it('get --json: a record per id, JSON Lines, the unknown id a record with its error (exit 1)', async () => {
    const cwd = tempDir();
    const [name] = await invoices(cwd, 1);
    const run = await extract(cwd, service(), [name!, '--json', '-o', 'out.jsonl', '--no-state']);
    const id = linesOf(run.stdout, RunEvent).flatMap((e) => (e.event === 'record' ? [e.record.document_id] : []))[0]!;
    const got = await extract(cwd, service(), ['get', id, 'doc_unknown', '--json']);
    expect(got.exitCode, got.stderr).toBe(1);
    const records = linesOf(got.stdout, DocumentRecord);
    expect(records.map((x) => [x.document_id, x.status])).toEqual([
      [id, 'completed'],
      ['doc_unknown', 'error'],
    ]);
  });

  it('status --json and config --json: one object each, of the documented shape', async () => {
    const cwd = tempDir();
    const names = await invoices(cwd, 1);
    await extract(cwd, service(), [...names, '-o', 'out.jsonl', '--state', 'j.sqlite', '-q']);
    const status = await extract(cwd, service(), ['status', '--state', 'j.sqlite', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(StatusView.parse(JSON.parse(status.stdout))).toMatchObject({ documents: 1, completed: 1 });

    const set = await extract(cwd, service(), ['config', 'set', 'base_url', 'https://x.example', '--json']);
    expect(set.exitCode, set.stderr).toBe(0);
    expect(ConfigValue.parse(JSON.parse(set.stdout))).toMatchObject({ key: 'base_url', value: 'https://x.example' });
    const get = await extract(cwd, service(), ['config', 'get', 'api_key', '--json']);
    expect(get.exitCode).toBe(1);
    expect(ConfigValue.parse(JSON.parse(get.stdout))).toMatchObject({ value: null, overridden_by: 'EXTRACT_API_KEY' });
    const list = await extract(cwd, service(), ['config', 'list', '--json']);
    expect(ConfigList.parse(JSON.parse(list.stdout)).values).toEqual({ base_url: 'https://x.example' });
    const path = await extract(cwd, service(), ['config', 'path', '--json']);
    expect(ConfigPath.parse(JSON.parse(path.stdout)).path).toBe(join(cwd, '.config', 'config.json'));
  });

  it('watch --json: started, a record per document as it ends, stopped on SIGTERM', async ({ spawnCli }) => {
    const cwd = dropDir();
    const watcher = await startWatch(spawnCli, cwd, service(), [
      'in',
      '--json',
      '-o',
      'out.jsonl',
      '--settle',
      '200ms',
    ]);
    const [file] = await dropInvoices(cwd, 1);
    await until(() => watcher.stdout().includes('"event":"record"'), 'a record event', watcher);
    watcher.child.kill('SIGTERM');
    await watcher.child;
    const events = linesOf(watcher.stdout(), RunEvent);
    expect(events.map((e) => e.event)).toEqual(['started', 'record', 'stopped']);
    expect(events[1]).toMatchObject({ record: { file, status: 'completed' } });
    expect(events[2]).toMatchObject({ exit_code: 0 });
  });
});
