import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { JournalFact } from '../../src/journal/journal-facts.ts';
import { openJournal } from '../../src/journal/journal.ts';
import { runExtract } from '../lib/cli.ts';
import { writeCopies } from '../lib/pdfs.ts';
import { check, measure, type Measured } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';
import { STANDIN_KEY, startStandIn } from '../lib/standin.ts';

/**
 * Row 4. N small files (6,000, 20,000 and 100,000), all completed in the journal by a real run
 * against the stand-in; then a rerun, which must find nothing to send: its time against
 * sha256sum over the same files (hashing is the limit; the rerun reads no file, only stats and
 * the journal), and the largest against the middle one (linear). And the journal's cost per
 * appended fact at two sizes.
 */
export async function resumeRows(ctx: BenchContext): Promise<Row[]> {
  // 6,000 (start-up weighs most), 20,000, and 100,000 (linear, not worse). --tiny keeps
  // the middle and the largest, so that the scale rows still come out, at the smallest that do:
  // each size costs two CLI runs per journal (the first run that builds it, the rerun), and the
  // smallest's row is the same code as the middle's (it was 1.2 of the smoke test's CPU seconds).
  // The middle journal must hold more facts than the small one appendCost copies (20 lines):
  // 20 documents make 41.
  const sizes = ctx.tiny ? [20, 40] : [6_000, 20_000, 100_000];
  const [middle, largest] = sizes.slice(-2) as [number, number];
  const standIn = await startStandIn();
  const rows: Row[] = [];
  try {
    const own = new Map<string, Map<number, number>>();
    for (const n of sizes) {
      const dir = join(ctx.tmp, `many-${n}`);
      ctx.log(`row 4: writing ${n} small files`);
      await writeCopies(dir, n);
      for (const kind of ['jsonl', 'sqlite'] as const) {
        const journal = join(ctx.tmp, `many-state-${n}.${kind}`);
        const id = `4 rerun${kind === 'sqlite' ? ' sqlite' : ''}${n === middle ? '' : ` ${n >= 1000 ? `${n / 1000}k` : n}`}`;
        const what =
          kind === 'jsonl' ? 'the JSON Lines journal (--state FILE.jsonl)' : 'the SQLite journal (the default)';
        const profile = n === middle ? RERUN_PROFILE : undefined;
        const measured = await rerunRow(ctx, { n, dir, standIn, journal, id, what, profile });
        rows.push(measured.row);
        const times = own.get(kind) ?? new Map<number, number>();
        times.set(n, measured.figure);
        own.set(kind, times);
        // The journal's cost per appended fact, at the size of the middle batch.
        if (kind === 'jsonl' && n === middle) rows.push(await appendCost(ctx, journal, factsIn(journal)));
      }
      rmSync(dir, { recursive: true, force: true });
    }
    // Linear, not worse: the largest batch against the middle one, five times smaller.
    // 5.5x at 5x the files (20,000 -> 100,000), linear with a tenth to spare.
    const limit = (1.1 * largest) / middle;
    for (const [kind, times] of own) {
      rows.push(
        row(ctx, {
          id: `4 rerun${kind === 'sqlite' ? ' sqlite' : ''} scale`,
          measurement: `Rerun of ${largest.toLocaleString('en-US')} completed files (${kind === 'sqlite' ? 'SQLite' : 'JSON Lines'} journal) against its own rerun of ${middle.toLocaleString('en-US')}`,
          figure: times.get(largest)!,
          unit: 's',
          peer: `its own rerun of ${middle.toLocaleString('en-US')} files`,
          peerFigure: times.get(middle)!,
          goal: `<= ${limit.toFixed(1)}x (linear: ${largest / middle}x the files)`,
          pass: (x) => x <= limit,
        }),
      );
    }
  } finally {
    await standIn.close();
  }
  return rows;
}

type StandIn = Awaited<ReturnType<typeof startStandIn>>;

/**
 * Why the rerun is not at sha256sum's time, measured on 20,000 files with --cpu-prof,
 * --trace-gc and strace -c; written once beside the middle size's rows.
 */
const RERUN_PROFILE =
  "Where the time goes since the plan streams (20,000 files, SQLite journal, --cpu-prof of one rerun, self time, 1.30 s profiled): the garbage collector 18%; the journal's rows for each window (prefetch: one query a window, a JSON.parse of each document's state) 14%; each record written to the spool and read back for -o (spoolLine, parseSpoolLine, jsonLine, storedResults, textHasNull) 15%; the walk (lstat, readdir, Stats) 6%; the stat cache's cursor 3%; the summary's counts 2%; the rest spread thin, with Node's start and module loading ~0.1 s (a one-file run). The system calls are at the floor (strace -c: one statx per file, no document opened, test/e2e/batch-resume.proc.test.ts checks it). Measured against the plan held whole (the tree before this round, interleaved in one sitting, sha256sum 0.32-0.46 s there): 20,000 files 1.01-1.12 -> 0.83-1.19 s wall, 120-129 -> 94-99 MB; 6,000 files 0.36-0.66 -> 0.42-0.47 s, 99-114 -> 85-88 MB. A batch past its first window favours memory (V8's --optimize-for-size): without it 0.80-1.06 s but 154-174 MB at 20,000. A done document is no longer written to the plan store (encodeJob and its writes were 6% of the profile). Left: below sha256sum needs a rerun that neither parses each document's state nor writes and rereads each record (the journal's completed results copied to -o as text, without the spool); not done this round";

/**
 * A first run sends all N files, building `journal`; then reruns, which must find nothing to send:
 * their time against sha256sum over the same files (hashing is the limit).
 */
async function rerunRow(
  ctx: BenchContext,
  r: {
    n: number;
    dir: string;
    standIn: StandIn;
    journal: string;
    id: string;
    what: string;
    profile?: string | undefined;
  },
): Promise<{ row: Row; figure: number }> {
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
  const figure = median(ours.map((m) => m.wall));
  const cpu = median(ours.map((m) => m.user + m.sys));
  const bytes = journalBytes(journal);
  const made = row(ctx, {
    id: r.id,
    measurement: `Rerun with all ${n.toLocaleString('en-US')} small files completed in ${r.what} (${facts.toLocaleString('en-US')} facts): time to send nothing`,
    figure,
    unit: 's',
    peer: 'sha256sum over the same files (find | xargs)',
    peerFigure: median(peer.map((m) => m.wall)),
    goal: '<= 1.0x',
    pass: (x) => x <= 1.0,
    note: `the rerun also writes all ${n.toLocaleString('en-US')} records to -o (from the journal) and starts Node; CPU (user+sys) ${cpu.toFixed(2)} s vs sha256sum's ${median(peer.map((m) => m.user + m.sys)).toFixed(2)} s; peak RSS ${median(ours.map((m) => m.maxRssMb)).toFixed(0)} MB; journal ${(bytes / n).toFixed(0)} bytes a document${journal.endsWith('.jsonl') ? ' (file and index)' : ''}; the first run, against the stand-in at -c 8, took ${first.wall.toFixed(1)} s (${(n / first.wall).toFixed(0)} docs/s); journal unchanged by reruns: ${unchanged ? 'yes' : 'no'}${r.profile === undefined ? '' : `. ${r.profile}`}`,
  });
  return { row: made, figure };
}

function journalBytes(journal: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(journal) + size(`${journal}.index`) + size(`${journal}-wal`);
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
  const large = ctx.tiny ? Math.min(available, 400) : Math.min(available, 20_000);
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
    note: `median of ${appends} appends through src/journal/journal.ts openJournal(), the real facts of the run above`,
  });
}

function hashOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
