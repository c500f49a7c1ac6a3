import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { JournalFact } from '../../src/batch/journal-facts.ts';
import { openJournal } from '../../src/batch/journal.ts';
import { runExtract } from '../lib/cli.ts';
import { writeCopies } from '../lib/pdfs.ts';
import { check, measure, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/**
 * Row 4. N small files, all completed in the journal by a real run against the stand-in;
 * then a rerun, which must find nothing to send: its time against sha256sum over the same
 * files (hashing is the limit). And the journal's cost per appended fact at two sizes.
 */
export async function resumeRows(ctx: BenchContext): Promise<Row[]> {
  const n = ctx.tiny ? 200 : 20_000;
  const dir = join(ctx.tmp, 'many');
  ctx.log(`row 4: writing ${n} small files`);
  await writeCopies(dir, n);
  const standIn = await startStandIn();
  const rows: Row[] = [];
  try {
    const jsonl = join(ctx.tmp, 'many-state.jsonl');
    rows.push(
      await rerunRow(ctx, {
        n,
        dir,
        standIn,
        journal: jsonl,
        id: '4 rerun',
        what: 'the JSON Lines journal (--state FILE.jsonl)',
      }),
    );
    rows.push(await appendCost(ctx, jsonl, factsIn(jsonl)));
    // The user's default journal is SQLite (state/sqlite.ts): the same rerun through it.
    rows.push(
      await rerunRow(ctx, {
        n,
        dir,
        standIn,
        journal: join(ctx.tmp, 'many-state.sqlite'),
        id: '4 rerun sqlite',
        what: 'the SQLite journal (the default)',
      }),
    );
  } finally {
    await standIn.close();
  }
  return rows;
}

type StandIn = Awaited<ReturnType<typeof startStandIn>>;

/**
 * A first run sends all N files, building `journal`; then reruns, which must find nothing to send:
 * their time against sha256sum over the same files (hashing is the limit).
 */
async function rerunRow(
  ctx: BenchContext,
  r: { n: number; dir: string; standIn: StandIn; journal: string; id: string; what: string },
): Promise<Row> {
  const { n, dir, standIn, journal } = r;
  const out = join(ctx.tmp, 'many.jsonl');
  const home = join(ctx.tmp, 'home');
  ctx.log(`row ${r.id}: a first run sends all ${n} (builds the journal)`);
  standIn.reset();
  const first = await runExtract(
    { inputs: [dir], baseUrl: standIn.url, key: STANDIN_KEY, concurrency: 8, out, state: journal },
    home,
  );
  check(first, 'extract (first run)');
  if (standIn.counts.inline !== n) throw new Error(`row ${r.id}: the first run sent ${standIn.counts.inline} of ${n}`);
  const before = fingerprint(journal);

  const ours: Measured[] = [];
  const peer: Measured[] = [];
  for (let i = 0; i < ctx.reps; i++) {
    ctx.log(`row ${r.id}: rerun ${i + 1}/${ctx.reps}`);
    standIn.reset();
    const m = await runExtract(
      { inputs: [dir], baseUrl: standIn.url, key: STANDIN_KEY, concurrency: 8, out, state: journal },
      home,
    );
    check(m, 'extract (rerun)');
    const sent = standIn.counts.inline + standIn.counts.get + standIn.counts.uploadUrl;
    if (sent !== 0) throw new Error(`row ${r.id}: the rerun sent ${sent} requests; it should have found nothing to do`);
    ours.push(m);
    const s = await measure('sh', ['-c', `find "$0" -type f -print0 | xargs -0 sha256sum > /dev/null`, dir]);
    check(s, 'sha256sum');
    peer.push(s);
  }
  // The reruns added no fact (the JSONL file's bytes are those the first run left).
  const unchanged = fingerprint(journal) === before;
  if (!unchanged) throw new Error(`row ${r.id}: a rerun with nothing to do changed the journal`);
  const facts = factsIn(journal);
  return row(ctx, {
    id: r.id,
    measurement: `Rerun with all ${n.toLocaleString('en-US')} small files completed in ${r.what} (${facts.toLocaleString('en-US')} facts): time to send nothing`,
    figure: median(ours.map((m) => m.wall)),
    unit: 's',
    peer: 'sha256sum over the same files (find | xargs)',
    peerFigure: median(peer.map((m) => m.wall)),
    goal: '<= 1.5x',
    pass: (x) => x <= 1.5,
    note: `the rerun also writes all ${n.toLocaleString('en-US')} records to -o (from the journal) and starts Node; the first run, against the stand-in at -c 8, took ${first.wall.toFixed(1)} s (${(n / first.wall).toFixed(0)} docs/s); journal unchanged by reruns: ${unchanged ? 'yes' : 'no'}`,
  });
}

/** What a rerun must not change: the JSONL file's bytes; the SQLite journal's facts (each run registers its worker). */
function fingerprint(journal: string): string {
  if (!journal.endsWith('.sqlite')) return `${statSync(journal).size}:${hashOf(readFileSync(journal))}`;
  const db = new DatabaseSync(journal, { readOnly: true });
  try {
    return String(db.prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM extract_facts').get()?.last);
  } finally {
    db.close();
  }
}

function factsIn(journal: string): number {
  if (!journal.endsWith('.sqlite'))
    return readFileSync(journal, 'utf8')
      .split('\n')
      .filter((l) => l !== '').length;
  const db = new DatabaseSync(journal, { readOnly: true });
  try {
    return Number(db.prepare('SELECT count(*) AS n FROM extract_facts').get()?.n ?? 0);
  } finally {
    db.close();
  }
}

/** The journal's cost per new fact, appended to a journal of `small` lines and of `large` lines. */
async function appendCost(ctx: BenchContext, journal: string, available: number): Promise<Row> {
  const large = ctx.tiny ? Math.min(available, 400) : 20_000;
  const small = ctx.tiny ? 20 : 1000;
  const text = readFileSync(journal, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  const sample = text[0] ?? '{}';
  const fact = JournalFact.parse(JSON.parse(sample));
  const appends = ctx.tiny ? 50 : 500;
  const perAppend: Record<'small' | 'large', number[]> = { small: [], large: [] };
  for (let r = 0; r < ctx.reps; r++) {
    for (const which of ['small', 'large'] as const) {
      const lines = which === 'small' ? small : large;
      const path = join(ctx.tmp, `journal-${which}.jsonl`);
      writeFileSync(path, `${text.slice(0, lines).join('\n')}\n`);
      const writer = await openJournal(path, false);
      const times: number[] = [];
      for (let i = 0; i < appends; i++) {
        const t = performance.now();
        await writer.append({ ...fact, at: new Date().toISOString() });
        times.push(performance.now() - t);
      }
      await writer.close();
      perAppend[which].push(median(times));
      const grown = readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '').length;
      if (grown !== lines + appends)
        throw new Error(`row 4: the journal has ${grown} lines after ${appends} appends to ${lines}`);
    }
  }
  return row(ctx, {
    id: '4 append',
    measurement: `Journal: one appended fact (write + fdatasync) at ${large.toLocaleString('en-US')} lines`,
    figure: median(perAppend.large),
    unit: 'ms',
    peer: `the same at ${small.toLocaleString('en-US')} lines`,
    peerFigure: median(perAppend.small),
    goal: '~1x (constant)',
    pass: (x) => x <= 1.5,
    note: `median of ${appends} appends through src/batch/journal.ts openJournal(), the real facts of the run above`,
  });
}

function hashOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
