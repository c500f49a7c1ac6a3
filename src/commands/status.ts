import type { Writable } from 'node:stream';
import type { Log } from '../client/deps.ts';
import { nullFields, type ReviewEntry } from '../outputs/review.ts';
import { chargeOf, type FailureCharge } from '../cost/charge.ts';
import { factKey, replayer } from '../journal/journal.ts';
import { setAsideEarlier } from '../cost/rerun.ts';
import { openState, parseStateSpec, type History } from '../journal/state/index.ts';

/**
 * `extract status`: a batch's view from anywhere, read from its journal (the file, or the
 * database many workers share): documents by outcome, pages charged, per worker, and the
 * oldest document still processing. Read-only: no lock is taken, nothing is written.
 */
export type StatusView = {
  journal: string;
  documents: number;
  completed: number;
  failed: number;
  /** Of `failed`: failures that fail the same way again (cost/rerun.ts failsAgain), which runs list but do not fail on. */
  set_aside: number;
  /** Submitted, result not collected yet. */
  processing: number;
  /** An extract request in flight at a crash: may have been charged; --retry-failed resends it under its key. */
  uncertain: number;
  pages_charged: number;
  /** Completed with a null in their results: for a person. */
  needs_review: number;
  oldest_pending: { file: string; document_id: string; since: string } | null;
  /** With --failed: each failed document, newest first. */
  failed_documents?: Array<{
    file: string;
    document_id: string | null;
    error: string;
    charge: FailureCharge;
    at: string;
  }>;
  /** With --needs-review: each completed document with null fields (listen's review.jsonl shape), newest first. */
  review?: Array<ReviewEntry & { at: string }>;
  workers: Array<{
    id: string;
    host: string | null;
    pid: number | null;
    started: string | null;
    last_seen: string | null;
    finished: string | null;
    alive: boolean;
    holding: number;
    completed: number;
    failed: number;
    pages: number;
  }>;
};

/** The latest state of each document and who wrote it, then the counts. Pure. */
export function statusOf(
  where: string,
  history: History,
  list: { failed?: boolean; needsReview?: boolean } = {},
): StatusView {
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
    pages_charged: 0,
    needs_review: 0,
    oldest_pending: null,
    workers: [],
  };
  const failed: NonNullable<StatusView['failed_documents']> = [];
  const review: NonNullable<StatusView['review']> = [];
  const workers = new Map<string, StatusView['workers'][number]>();
  for (const w of history.workers) {
    workers.set(w.id, {
      id: w.id,
      host: w.host,
      pid: w.pid,
      started: w.started,
      last_seen: w.seen,
      finished: w.finished,
      alive: w.alive,
      holding: w.holding,
      completed: 0,
      failed: 0,
      pages: 0,
    });
  }
  const workerOf = (id: string) => {
    let w = workers.get(id);
    if (!w) {
      w = {
        id,
        host: null,
        pid: null,
        started: null,
        last_seen: null,
        finished: null,
        alive: false,
        holding: 0,
        completed: 0,
        failed: 0,
        pages: 0,
      };
      workers.set(id, w);
    }
    return w;
  };
  for (const [key, state] of known) {
    const worker = by.get(key) ?? null;
    switch (state.fact) {
      case 'completed': {
        view.completed++;
        view.pages_charged += state.page_count ?? 0;
        const nulls = state.results === null ? [] : nullFields(state.results);
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
      case 'sending':
        view.uncertain++;
        break;
    }
  }
  view.workers = [...workers.values()];
  const newestFirst = (a: { at: string }, b: { at: string }) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0);
  if (list.failed === true) view.failed_documents = failed.sort(newestFirst);
  if (list.needsReview === true) view.review = review.sort(newestFirst);
  return view;
}

export function statusLines(view: StatusView): string[] {
  const lines = [
    `journal: ${view.journal}`,
    `${view.documents} document${view.documents === 1 ? '' : 's'}: ${view.completed} completed (${view.needs_review} with null fields to review), ${view.failed} failed, ${view.processing} processing, ${view.uncertain} uncertain (in flight at a crash); ${view.pages_charged} page${view.pages_charged === 1 ? '' : 's'} charged`,
  ];
  if (view.set_aside > 0)
    lines.push(
      `${view.set_aside} of the failed fail the same way again (the service judged them): set aside, listed by every run, which exits 0 for them; --retry-failed sends them again`,
    );
  if (view.failed_documents !== undefined) {
    lines.push(`failed (${view.failed_documents.length}):`);
    for (const f of view.failed_documents)
      lines.push(`  ${f.file}  ${f.document_id ?? '-'}  ${f.at}  ${f.error} (charge: ${f.charge})`);
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
  if (view.workers.length > 0) {
    lines.push('workers:');
    for (const w of view.workers) {
      const state = w.finished
        ? `finished ${w.finished}`
        : w.alive
          ? `working, holds ${w.holding}`
          : `gone (last seen ${w.last_seen ?? '?'})`;
      lines.push(`  ${w.id}  ${w.completed} completed, ${w.failed} failed, ${w.pages} pages; ${state}`);
    }
  }
  return lines;
}

export async function runStatus(
  options: {
    state: string;
    json: boolean;
    leaseMs: number;
    outageMs?: number;
    failed?: boolean;
    needsReview?: boolean;
  },
  deps: { cwd: string; stdout: Writable; log: Log },
): Promise<StatusView> {
  const state = await openState(parseStateSpec(options.state, deps.cwd), {
    readOnly: true,
    leaseMs: options.leaseMs,
    outageMs: options.outageMs,
    log: deps.log,
  });
  try {
    const view = statusOf(state.where, await state.history(), {
      failed: options.failed,
      needsReview: options.needsReview,
    });
    deps.stdout.write(options.json ? `${JSON.stringify(view, null, 2)}\n` : `${statusLines(view).join('\n')}\n`);
    return view;
  } finally {
    await state.close();
  }
}
