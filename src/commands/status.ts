import type { Writable } from 'node:stream';
import type { Log } from '../client/deps.ts';
import { inert, SERVICE_TEXT_MAX } from '../inert.ts';
import { DEFAULT_MISSING_MARKER, type MissingMarker, withoutMarker } from '../outputs/missing-marker.ts';
import { nullFields } from '../outputs/review.ts';
import { chargeOf, UNCERTAIN_CAUSES, type UncertainCause } from '../cost/charge.ts';
import { factKey, replayer, stateKey, type JournalFact } from '../journal/journal.ts';
import { setAsideEarlier } from '../cost/rerun.ts';
import { liveHolder } from '../journal/lock.ts';
import { readRescued, rescuePlacesFor } from '../journal/state/rescue.ts';
import { openState, parseStateSpec, type History } from '../journal/state/index.ts';
import type { StatusViewShape } from '../outputs/json-shapes.ts';
import { workerLines } from './status-workers.ts';

/**
 * `extract status`: a batch's view from anywhere, read from its journal (the file, or the
 * database many workers share): documents by outcome, pages charged, per worker, and the
 * oldest document still processing. Read-only: no lock is taken, nothing is written.
 */
/** Its shape is the zod schema `extract status --json` is documented by (outputs/json-shapes.ts). */
export type StatusView = StatusViewShape;

/** A document sent whose outcome this client does not know: it may have been charged. */
type UncertainEntry = NonNullable<StatusView['uncertain_documents']>[number];

/** Each cause in words, for the list and the counts line. */
const WHY: Record<UncertainCause, string> = {
  gateway:
    "a proxy answered for the service (502, 504, or a 500 that is not the service's own): it may have done the work",
  connection: 'the connection dropped (or timed out) after the request went out: the service may have done the work',
  answer_refused: 'the service answered with something this client could not take: it made the document',
  in_flight: 'a run working on this journal has it out now',
  journal_unwritable:
    'the journal could not be written (a full disk?) after the request went out; the next run takes back what its rescue file kept',
  run_ended: 'the run that sent it ended before it journaled the answer (killed, crashed, the machine went down)',
};

/** What status reads beside the journal's facts: the rescue file (a full disk), and whether a run holds the journal now. */
export type Around = {
  /** The facts a run could not write to the journal, kept in its rescue file (journal/state/rescue.ts). */
  rescued?: readonly JournalFact[];
  /** Where they are. */
  rescueFile?: string;
  /** Since when a live run holds the journal's lock (the JSONL journal, whose facts name no worker). */
  liveSince?: string | undefined;
};

/** The latest state of each document and who wrote it, then the counts. Pure. */
export function statusOf(
  where: string,
  history: History,
  list: { failed?: boolean; needsReview?: boolean; uncertain?: boolean; missingMarker?: MissingMarker } = {},
  around: Around = {},
): StatusView {
  // The journal keeps results as the service gave them: the marker is read as missing here, as a run's records read it.
  const marker = list.missingMarker === undefined ? DEFAULT_MISSING_MARKER : list.missingMarker;
  const replay = replayer();
  const known = replay.known;
  const by = new Map<string, string | null>();
  for (const { fact, worker } of history.facts) {
    replay.apply(fact);
    const key = factKey(fact);
    if (key === undefined) by.clear();
    else by.set(key, worker);
  }
  const view: StatusView = {
    journal: where,
    documents: known.size,
    completed: 0,
    failed: 0,
    set_aside: 0,
    processing: 0,
    uncertain: 0,
    failed_uncertain: 0,
    uncertain_causes: {},
    pages_charged: 0,
    needs_review: 0,
    oldest_pending: null,
    workers: [],
  };
  const failed: NonNullable<StatusView['failed_documents']> = [];
  const review: NonNullable<StatusView['review']> = [];
  const uncertain: UncertainEntry[] = [];
  const rescued = laterFacts(around.rescued ?? []);
  const workers = new Map<string, StatusView['workers'][number]>();
  const addWorker = (id: string, w?: History['workers'][number]) => {
    const row = {
      id,
      host: w?.host ?? null,
      pid: w?.pid ?? null,
      started: w?.started ?? null,
      last_seen: w?.seen ?? null,
      finished: w?.finished ?? null,
      alive: w?.alive ?? false,
      holding: w?.holding ?? 0,
      completed: 0,
      failed: 0,
      pages: 0,
    };
    workers.set(id, row);
    return row;
  };
  for (const w of history.workers) addWorker(w.id, w);
  const workerOf = (id: string) => workers.get(id) ?? addWorker(id);
  for (const [key, state] of known) {
    const worker = by.get(key) ?? null;
    switch (state.fact) {
      case 'completed': {
        view.completed++;
        view.pages_charged += state.page_count ?? 0;
        const nulls = state.results === null ? [] : nullFields(withoutMarker(state.results, marker));
        if (state.results === null || nulls.length > 0) {
          view.needs_review++;
          review.push({ document_id: state.document_id, file_name: state.file, null_fields: nulls, at: state.at });
        }
        if (worker !== null) {
          workerOf(worker).completed++;
          workerOf(worker).pages += state.page_count ?? 0;
        }
        break;
      }
      case 'failed':
        view.failed++;
        if (setAsideEarlier(state)) view.set_aside++;
        if (chargeOf(state) === 'uncertain') {
          view.failed_uncertain++;
          const cause = state.cause ?? null;
          uncertain.push({
            file: state.file,
            document_id: state.document_id,
            pages: state.counted?.document_id === state.document_id ? state.counted.page_count : null,
            state: 'failed',
            cause,
            why: cause === null ? state.reason : `${WHY[cause]}: ${state.reason}`,
            at: state.at,
          });
        }
        failed.push({
          file: state.file,
          document_id: state.document_id,
          error: state.reason,
          charge: chargeOf(state),
          at: state.at,
        });
        if (worker !== null) workerOf(worker).failed++;
        break;
      case 'submitted':
        view.processing++;
        if (view.oldest_pending === null || state.at < view.oldest_pending.since)
          view.oldest_pending = { file: state.file, document_id: state.document_id, since: state.at };
        break;
      case 'sending': {
        view.uncertain++;
        const later = rescued.get(key);
        const cause = later !== undefined ? 'journal_unwritable' : inFlightCause(state.at, worker, history, around);
        uncertain.push({
          file: state.file,
          document_id: later !== undefined && 'document_id' in later ? later.document_id : null,
          pages: later !== undefined && 'page_count' in later ? (later.page_count ?? null) : null,
          state: 'in_flight',
          cause,
          why:
            later !== undefined
              ? `${WHY[cause]}: ${later.fact}, its outcome waits in ${around.rescueFile}`
              : WHY[cause],
          at: state.at,
        });
        break;
      }
    }
  }
  view.workers = [...workers.values()];
  const newestFirst = (a: { at: string }, b: { at: string }) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0);
  if (list.failed === true) view.failed_documents = failed.sort(newestFirst);
  if (list.needsReview === true) view.review = review.sort(newestFirst);
  if (list.uncertain === true) view.uncertain_documents = uncertain.sort(newestFirst);
  view.uncertain_causes = countCauses(uncertain);
  return view;
}

/**
 * Why a document's `sending` fact is the last the journal has. A run that ends in order
 * journals an outcome for every request it sent, so a worker that finished and left one could
 * not write it; one still working has it out now; any other ended before the answer.
 */
function inFlightCause(at: string, worker: string | null, history: History, around: Around): UncertainCause {
  const info = worker === null ? undefined : history.workers.find((w) => w.id === worker);
  // The live holder of a JSONL journal's lock sent it only if it was sent since that run began.
  if (info === undefined)
    return worker === null && around.liveSince !== undefined && at >= around.liveSince ? 'in_flight' : 'run_ended';
  if (info.finished !== null) return 'journal_unwritable';
  return info.alive ? 'in_flight' : 'run_ended';
}

/** The last outcome per document the rescue file holds. */
function laterFacts(facts: readonly JournalFact[]): Map<string, Outcome> {
  const out = new Map<string, Outcome>();
  for (const fact of facts)
    if (fact.fact === 'completed' || fact.fact === 'submitted' || fact.fact === 'failed')
      out.set(stateKey(fact.sha256, fact.target), fact);
  return out;
}
type Outcome = Extract<JournalFact, { fact: 'completed' | 'submitted' | 'failed' }>;

/** How many of the documents in flight are uncertain for each cause. */
function countCauses(entries: readonly UncertainEntry[]): Partial<Record<UncertainCause, number>> {
  const out: Partial<Record<UncertainCause, number>> = {};
  for (const e of entries) if (e.state === 'in_flight' && e.cause !== null) out[e.cause] = (out[e.cause] ?? 0) + 1;
  return out;
}

export function statusLines(view: StatusView): string[] {
  const lines = [
    `journal: ${view.journal}`,
    `${view.documents} document${view.documents === 1 ? '' : 's'}: ${view.completed} completed (${view.needs_review} with null fields to review), ${view.failed} failed, ${view.processing} processing, ${view.uncertain} uncertain${causesText(view.uncertain_causes)}; ${view.pages_charged} page${view.pages_charged === 1 ? '' : 's'} charged`,
  ];
  if (view.uncertain + view.failed_uncertain > 0 && view.uncertain_documents === undefined) {
    const n = view.uncertain + view.failed_uncertain;
    lines.push(
      `${n} document${n === 1 ? '' : 's'} sent without a known outcome (may have been charged): "extract status --uncertain" lists ${n === 1 ? 'it' : 'them'}; --retry-failed sends ${n === 1 ? 'it' : 'them'} again under the same Idempotency-Key`,
    );
  }
  if (view.set_aside > 0)
    lines.push(
      `${view.set_aside} of the failed fail the same way again (the service judged them): set aside, listed by every run, which exits 0 for them; --retry-failed sends them again`,
    );
  if (view.failed_documents !== undefined) {
    lines.push(`failed (${view.failed_documents.length}):`);
    for (const f of view.failed_documents)
      lines.push(
        `  ${f.file}  ${f.document_id ?? '-'}  ${f.at}  ${inert(f.error, SERVICE_TEXT_MAX)} (charge: ${f.charge})`,
      );
  }
  if (view.uncertain_documents !== undefined) {
    lines.push(`uncertain (${view.uncertain_documents.length}):`);
    for (const u of view.uncertain_documents) {
      const cost = u.pages === null ? 'pages unknown' : `may have cost ${u.pages} page${u.pages === 1 ? '' : 's'}`;
      lines.push(
        `  ${u.file}  ${u.document_id ?? '-'}  ${u.at}  ${u.state === 'in_flight' ? 'in flight' : 'failed'}, ${cost}: ${inert(u.why, SERVICE_TEXT_MAX)}`,
      );
    }
  }
  if (view.review !== undefined) {
    lines.push(`needs review (${view.review.length}):`);
    for (const r of view.review)
      lines.push(`  ${r.file_name}  ${r.document_id}  ${r.at}  null: ${r.null_fields.join(', ') || '(no results)'}`);
  }
  if (view.oldest_pending)
    lines.push(
      `oldest still processing: ${view.oldest_pending.file} (${view.oldest_pending.document_id}), submitted ${view.oldest_pending.since}`,
    );
  lines.push(...workerLines(view.workers));
  // Lines name files and quote the service: one line of ours each, whatever those hold.
  return lines.map((line) => inert(line));
}

/** The causes of the documents in flight, for the counts line: " (2: the run ended..., 1: ...)". */
function causesText(causes: StatusView['uncertain_causes']): string {
  const parts = UNCERTAIN_CAUSES.filter((c) => causes[c] !== undefined).map((c) => `${causes[c]}: ${SHORT[c]}`);
  return parts.length === 0 ? '' : ` (${parts.join('; ')})`;
}

const SHORT: Record<UncertainCause, string> = {
  gateway: 'a proxy answered',
  connection: 'the connection dropped',
  answer_refused: 'an answer refused',
  in_flight: 'in flight now',
  journal_unwritable: 'the journal could not be written',
  run_ended: 'the run ended before the answer',
};

export async function runStatus(
  options: {
    state: string;
    json: boolean;
    leaseMs: number;
    outageMs?: number;
    failed?: boolean;
    needsReview?: boolean;
    uncertain?: boolean;
    missingMarker?: MissingMarker;
  },
  deps: { cwd: string; stdout: Writable; log: Log; env?: Record<string, string | undefined> },
): Promise<StatusView> {
  const spec = parseStateSpec(options.state, deps.cwd);
  const around = spec.kind === 'postgres' ? {} : await aroundJournal(spec.path, deps.env ?? process.env, deps.log);
  const state = await openState(spec, {
    readOnly: true,
    leaseMs: options.leaseMs,
    outageMs: options.outageMs,
    log: deps.log,
  });
  try {
    const view = statusOf(
      state.where,
      await state.history(),
      {
        failed: options.failed,
        needsReview: options.needsReview,
        uncertain: options.uncertain,
        missingMarker: options.missingMarker,
      },
      around,
    );
    deps.stdout.write(options.json ? `${JSON.stringify(view, null, 2)}\n` : `${statusLines(view).join('\n')}\n`);
    return view;
  } finally {
    await state.close();
  }
}

/** What a journal file's neighbours say: its rescue files' facts (a full disk), and whether a live run holds its lock. */
async function aroundJournal(path: string, env: Record<string, string | undefined>, log: Log): Promise<Around> {
  const files = await readRescued(rescuePlacesFor(path, true, env), log);
  return {
    rescued: files.flatMap((f) => f.facts),
    rescueFile: files.map((f) => f.path).join(', '),
    liveSince: (await liveHolder(path))?.started,
  };
}
