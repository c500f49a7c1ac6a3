import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createRecords, MemoryRecords, RecordSpool, type RecordStore, unreadableKey } from '../../src/batch/records.ts';
import { releaseSummary, reportChunks, tallySummary, type ReportEntry } from '../../src/batch/summary.ts';
import { jsonLine } from '../../src/outputs/json.ts';
import { completedRecord, errorRecord } from '../../src/outputs/record.ts';
import { storedResults } from '../../src/outputs/stored-results.ts';
import { resolveOutput } from '../../src/outputs/target.ts';
import { writeOutputs } from '../../src/outputs/write.ts';
import { tempDir } from '../helpers/cli.ts';

/**
 * A run does not hold its records until the finish step. Each is spooled to
 * disk as it is emitted and read back, one at a time, for the outputs, the summary and the
 * report: the objects a run emits are collectable at once.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function entry(i: number): ReportEntry {
  const record = completedRecord({ file: `in/f${i}.pdf`, document_id: `doc_${i}`, route: 'inline' }, 1, {
    total: i,
    email: null,
  });
  return { ...record, outcome: 'completed', sha256: i.toString(16).padStart(64, '0') };
}

/** Emits `n` records and returns weak references to them (made in a job of their own, so that they may be collected after it). */
function emitAll(records: ReturnType<typeof createRecords>, n: number): WeakRef<ReportEntry>[] {
  return Array.from({ length: n }, (_, i) => {
    const e = entry(i);
    records.emit(`key-${i}`, e);
    return new WeakRef(e);
  });
}

async function collected(refs: WeakRef<object>[]): Promise<number> {
  // A WeakRef keeps its target alive until the job that made it ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return refs.filter((r) => r.deref() === undefined).length;
}

const extra = {
  stoppedBy: null,
  message: null,
  elapsedMs: 1,
  dryRun: false,
  charges: { reserved: 100, refunded: 0, unknown: 0, recognised: 0 },
};

describe('a run keeps its records on disk, not in memory', () => {
  it('an emitted record is not held: it is collectable at once, and read back equal', async () => {
    const records = createRecords(undefined, undefined);
    const refs = emitAll(records, 100);
    expect(await collected(refs)).toBe(100);
    expect(records.get('key-7')).toEqual(entry(7));
    const keys = Array.from({ length: 100 }, (_, i) => `key-${99 - i}`);
    expect([...records.inOrder(keys)].map((e) => e.document_id)).toEqual(keys.map((k) => `doc_${k.slice(4)}`));
  });

  it('the summary counts the records and holds none of them; its report reads them again', async () => {
    const records = createRecords(undefined, undefined);
    const keys = Array.from({ length: 100 }, (_, i) => `key-${i}`);
    emitAll(records, 100);
    const summary = tallySummary(records.inOrder(keys), extra);
    const refs: WeakRef<ReportEntry>[] = [];
    // What the finish step reads (the report, a line a document) is dropped as it goes.
    for (const chunk of reportChunks(summary)) expect(typeof chunk).toBe('string');
    for (const e of records.inOrder(keys)) refs.push(new WeakRef(e));
    // The last one read may still be in a register of the loop; held records would be all 100.
    expect(await collected(refs)).toBeGreaterThanOrEqual(99);
    expect(summary.completed).toBe(100);
    // Every document has a null (email): the review list and the report say so, from disk.
    expect(summary.needs_review.map((r) => r.null_fields)).toEqual(keys.map(() => ['email']));
    expect([...reportChunks(summary)].join('')).toBe(`${JSON.stringify(summary, null, 2)}\n`);
  });

  it('where no spool can be made (no writable temp directory), the records are kept in memory', () => {
    expect(RecordSpool.open('/nonexistent/extract-test')).toBeUndefined();
    const records = createRecords(undefined, undefined, new MemoryRecords());
    records.emit('k', entry(1));
    expect(records.get('k')).toEqual(entry(1));
    // Released, it fails as the spool does: a read after release is found here too.
    records.close();
    expect(() => records.get('k')).toThrow(/read after the run released them/);
  });

  it('a released summary frees its spool at once: a watcher running cycle after cycle holds no descriptor per cycle', () => {
    const openFds = () => readdirSync('/proc/self/fd').length;
    const before = openFds();
    const summaries = Array.from({ length: 20 }, () => {
      const records = createRecords(undefined, undefined);
      emitAll(records, 3);
      return tallySummary(records.inOrder(['key-0', 'key-1', 'key-2']), { ...extra, release: () => records.close() });
    });
    // Held summaries hold their spools (20 descriptors) until released, not until collected.
    expect(openFds() - before).toBe(20);
    expect(summaries[0]!.documents).toHaveLength(3);
    for (const summary of summaries) releaseSummary(summary);
    expect(openFds()).toBe(before);
    // Read before the release: kept; never read: a clear error, not another file's bytes.
    expect(summaries[0]!.documents).toHaveLength(3);
    expect(() => summaries[1]!.documents).toThrow(/read after the run released them/);
  });
});

describe('a rerun counts and writes its records without reading them back', () => {
  it('the summary counts from marks kept at emit, and the JSON Lines output copies each line: no record is parsed', async () => {
    const spool = RecordSpool.open()!;
    let reads = 0;
    const counting: RecordStore = {
      put: (key, e) => spool.put(key, e),
      get: (key) => {
        reads++;
        return spool.get(key);
      },
      jsonLine: (key) => spool.jsonLine(key),
      close: () => spool.close(),
    };
    const records = createRecords(undefined, undefined, counting);
    const stored = (i: number): ReportEntry => ({
      ...completedRecord(
        { file: `in/f${i}.pdf`, document_id: `doc_${i}`, route: 'inline' },
        1,
        storedResults(`{"total":${i},"email":${i % 2 === 0 ? 'null' : '"a@b"'}}`),
      ),
      outcome: 'skipped',
      sha256: i.toString(16).padStart(64, '0'),
    });
    for (let i = 0; i < 10; i++) records.emit(i, stored(i));
    records.emit(unreadableKey('gone.pdf'), {
      ...errorRecord({ file: 'gone.pdf', document_id: null, route: null }, 'cannot read gone.pdf'),
      outcome: 'unreadable',
      sha256: null,
    });
    const keys = [unreadableKey('gone.pdf'), ...Array.from({ length: 10 }, (_, i) => i)];
    const summary = tallySummary(records.inOrder(keys), extra);
    expect(reads).toBe(0);
    expect([summary.skipped, summary.failed, summary.exit_code]).toEqual([10, 1, 1]);
    const dir = tempDir();
    const path = join(dir, 'out.jsonl');
    await writeOutputs(resolveOutput({ out: path, format: undefined, cwd: dir }), records.inOrder(keys), { cwd: dir });
    expect(reads).toBe(0);
    // The same bytes as the writer makes from each record read back.
    expect(readFileSync(path, 'utf8')).toBe([...records.inOrder(keys)].map((e) => jsonLine(e)).join(''));
    expect(reads).toBe(11);
    // The counts from the records themselves agree with the marks'.
    expect(tallySummary([...records.inOrder(keys)], extra)).toEqual(summary);
  });
});
