import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { stateKey, versionFact, type KnownState } from '../../src/journal/journal.ts';
import { openState, parseStateSpec } from '../../src/journal/state/index.ts';
import { writeIndex } from '../../src/journal/state/journal-index.ts';
import { keyFingerprint } from '../../src/config/settings.ts';
import { runExtract } from '../lib/cli.ts';
import { writeCopies } from '../lib/pdfs.ts';
import { check, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/**
 * Row 11: opening a journal costs the same whatever it knows. A run over 10 new
 * files beside a journal of 10^4, 10^5 and 10^6 known documents (this key's own, completed,
 * made by a generator: the facts a real run writes, without the run), against the same run
 * beside an empty journal; the JSON Lines journal (with its index) and SQLite (the default).
 * Also the journal's size per document, which `extract journal compact` keeps to one fact each.
 */
export async function journalOpenRows(ctx: BenchContext): Promise<Row[]> {
  // --tiny: one size, its row beside the empty journal's, for each kind: every size's row runs
  // the same code, and each costs a CLI run.
  const sizes = ctx.tiny ? [1_000] : [10_000, 100_000, 1_000_000];
  const standIn = await startStandIn();
  const rows: Row[] = [];
  const template = join(ctx.tmp, 'open-template');
  await writeCopies(template, 1);
  const pdf = readFileSync(join(template, 'doc-000000.pdf'));
  let batch = 0;
  /** Ten files no journal knows. */
  const newFiles = (): string => {
    const dir = join(ctx.tmp, `open-new-${batch++}`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 10; i++)
      writeFileSync(join(dir, `new-${i}.pdf`), Buffer.concat([pdf, Buffer.from(`%row11 ${batch} ${i}\n`)]));
    return dir;
  };
  const target = keyFingerprint(STANDIN_KEY, standIn.url);
  try {
    for (const kind of ['jsonl', 'sqlite'] as const) {
      const empty = join(ctx.tmp, `open-empty.${kind}`);
      await makeJournal(empty, 0, target);
      const journals = new Map<number, string>();
      for (const n of sizes) {
        const path = join(ctx.tmp, `open-${n}.${kind}`);
        ctx.log(`row 11: a ${kind} journal of ${n.toLocaleString('en-US')} known documents`);
        await makeJournal(path, n, target);
        journals.set(n, path);
      }
      const times = new Map<number, Measured[]>([[0, []], ...sizes.map((n) => [n, []] as [number, Measured[]])]);
      for (let r = 0; r < ctx.reps; r++) {
        for (const [n, path] of [[0, empty] as const, ...journals]) {
          standIn.reset();
          const m = await runExtract(
            {
              inputs: [newFiles()],
              baseUrl: standIn.url,
              key: STANDIN_KEY,
              concurrency: 8,
              out: join(ctx.tmp, 'open-out.jsonl'),
              state: path,
            },
            join(ctx.tmp, 'open-home'),
          );
          check(m, `extract (10 new files beside ${n} documents)`);
          if (standIn.counts.inline !== 10) throw new Error(`row 11: sent ${standIn.counts.inline} of 10`);
          times.get(n)!.push(m);
        }
      }
      const base = times.get(0)!;
      const cpu = (ms: Measured[]) => median(ms.map((m) => m.user + m.sys));
      for (const n of sizes) {
        const path = journals.get(n)!;
        const bytes = journalBytes(path);
        rows.push(
          row(ctx, {
            id: `11 ${kind} ${n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1_000}k`}`,
            measurement: `A run over 10 new files beside a ${kind === 'jsonl' ? 'JSON Lines' : 'SQLite'} journal of ${n.toLocaleString('en-US')} known documents`,
            figure: median(times.get(n)!.map((m) => m.wall)),
            unit: 's',
            peer: 'the same run beside an empty journal',
            peerFigure: median(base.map((m) => m.wall)),
            goal: '<= 1.5x',
            pass: (x) => x <= 1.5,
            note: `CPU (user+sys) ${cpu(times.get(n)!).toFixed(2)} s vs ${cpu(base).toFixed(2)} s; peak RSS ${median(times.get(n)!.map((m) => m.maxRssMb)).toFixed(0)} MB vs ${median(base.map((m) => m.maxRssMb)).toFixed(0)} MB; journal ${(bytes / n).toFixed(0)} bytes a document (one completed fact each, as after \`extract journal compact\`${kind === 'jsonl' ? ', with its index' : ''})`,
          }),
        );
      }
    }
  } finally {
    await standIn.close();
  }
  return rows;
}

/** A completed fact of the kind a real run writes for a one-page invoice. */
function completed(i: number, target: string): KnownState {
  return {
    fact: 'completed',
    at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    sha256: i.toString(16).padStart(64, '0'),
    target,
    file: `/data/in/${String(i % 1000).padStart(3, '0')}/doc-${i}.pdf`,
    route: 'inline',
    document_id: `doc_${i.toString(36).padStart(12, '0')}`,
    page_count: 1,
    results: { invoice_number: `INV-${i}`, total: i % 10_000, vendor: 'Acme GmbH', date: '2026-01-01' },
  };
}

function* documents(n: number, target: string): Generator<KnownState> {
  for (let i = 0; i < n; i++) yield completed(i, target);
}

/** A journal of `n` completed documents, written directly (a real run would take hours at 10^6). */
export async function makeJournal(path: string, n: number, target: string): Promise<void> {
  rmSync(path, { force: true });
  rmSync(`${path}.index`, { force: true });
  if (path.endsWith('.jsonl')) {
    const fd = openSync(path, 'w', 0o600);
    try {
      const lines: string[] = [JSON.stringify(versionFact())];
      for (const fact of documents(n, target)) {
        lines.push(JSON.stringify(fact));
        if (lines.length >= 10_000) {
          writeSync(fd, `${lines.join('\n')}\n`);
          lines.length = 0;
        }
      }
      if (lines.length > 0) writeSync(fd, `${lines.join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
    writeIndex(path, documents(n, target));
    return;
  }
  // The schema as a run makes it, then the facts and their per-document replay in one transaction.
  const state = await openState(parseStateSpec(path, '/'), { readOnly: false, leaseMs: 30_000, log: () => {} });
  await state.close();
  const db = new DatabaseSync(path);
  try {
    db.exec('BEGIN');
    const fact = db.prepare('INSERT INTO extract_facts (key, fact, body, worker, at) VALUES (?, ?, ?, NULL, ?)');
    const doc = db.prepare(
      'INSERT INTO extract_documents (key, state, results, before, last_fact, last_worker) VALUES (?, ?, ?, NULL, ?, NULL)',
    );
    for (const f of documents(n, target)) {
      const key = stateKey(f.sha256, f.target);
      const id = Number(fact.run(key, f.fact, JSON.stringify(f), Date.parse(f.at)).lastInsertRowid);
      const { results, ...rest } = f as Extract<KnownState, { fact: 'completed' }>;
      doc.run(key, JSON.stringify(rest), JSON.stringify(results), id);
    }
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

function journalBytes(path: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}.index`) + size(`${path}-wal`);
}
