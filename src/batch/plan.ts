import { printableBase } from './paths.ts';
import { type DocumentRecord, completedRecord, errorRecord } from '../outputs/record.ts';
import { describeFsError, type InputFile, type LinkNotFollowed, type UnreadableInput } from './discover.ts';
import { fileFacts, fileType, type FileFacts } from './facts.ts';
import { lookup, soleIdentity, type Identity } from '../journal/identity.ts';
import { asLookup, stateKey, type KnownLookup, type KnownState, type SentRequest } from '../journal/journal.ts';
import { type Action, rerunAction, resendOf } from '../cost/rerun.ts';
import type { StateJournal } from '../journal/state/index.ts';
import type { Unsettled } from './settle.ts';
import type { StatCache } from './stat-cache.ts';
import { routeChooser, type RouteDecision, type RouteFlag } from './route.ts';

/** A planned document: one input file, what we know of it, and what this run does with it (cost/rerun.ts Action). */
export type Job = {
  input: InputFile;
  sha256: string;
  mimeType: string;
  key: string;
  /**
   * The journal target the document's facts go under: its parser's (identity.ts), or the one
   * of the parser's targets that already knows it. Absent: the run's primary target.
   */
  target?: string;
  decision: RouteDecision;
  action: Action;
  prior: KnownState | undefined;
  /** Pages counted locally (--dry-run, --max-credits). */
  pages?: number;
  /** An earlier extract request whose outcome is unknown, to send again unchanged (--retry-failed). */
  resend?: SentRequest | undefined;
  /**
   * A large file not hashed yet: its sha256 is computed while its bytes are PUT (one read
   * pass), then looked up in the journal before POST extract. Until then `sha256` is '' and
   * `key` is provisional (`unhashed:` and the real path).
   */
  unhashed?: true;
};

/** The name the service sees (file_name): the file's own name, without its folders. */
export function serviceName(job: Job): string {
  return printableBase(job.input.path);
}

/**
 * The kinds of file the service reads (spec: "for example a PDF"; images by the inline and
 * upload routes), told from the content: PDF and any image type. Files found in a directory or
 * by a pattern that are something else (notes, spreadsheets, archives) are skipped unless
 * --all-files; a file named by itself is always sent.
 */
function isDocumentType(mimeType: string): boolean {
  return mimeType === 'application/pdf' || (mimeType.startsWith('image/') && mimeType !== 'image/svg+xml');
}

/** A file the run leaves out: not a document (skipped, uncharged), with its detected type. */
export type IgnoredInput = { file: string; realPath: string; mimeType: string };

export type PlanInput = {
  files: InputFile[];
  /** What the journal knows, looked up per file (a replay's map will do). */
  known: KnownLookup | ReadonlyMap<string, KnownState>;
  target: string;
  /** The parser's targets (identity.ts); absent: `target` alone. */
  identity?: Identity | undefined;
  route: RouteFlag;
  inlineMax: number;
  retryFailed: boolean;
  /** --all-files: send files of any type found in directories and by patterns. */
  allFiles?: boolean;
  /** --fresh: send every file again, whatever the journal knows (the journal is not erased). */
  fresh?: boolean;
  /** Content facts of files whose stat is unchanged since an earlier run read them. */
  cache?: StatCache | undefined;
  /** The wall clock, for the cache's racy-entry rule. */
  now?: () => number;
  /**
   * Files planned for upload above this size, which no fact of the journal names, are hashed
   * while they are sent rather than before (undefined: every file is hashed first).
   */
  hashWhileSendingAbove?: number | undefined;
  /** Files hashed at once: hashing is disk-bound, a few in parallel is enough. */
  parallel?: number;
  onProgress?: (done: number, total: number) => void;
};

/** What the plan step hands the send and finish steps. */
export type BatchPlan = {
  journal: StateJournal;
  /** What the journal knows of each document (a large file hashed on its upload is looked up in it). */
  known: KnownLookup;
  /** The journal's fingerprint of base URL and key ('no-key' for a dry run without one). */
  targetId: string;
  /** The parser's targets in the journal, which the run's documents are looked up under. */
  identity: Identity;
  /** One per readable input that is a document (or named by itself), in input order. */
  jobs: Job[];
  unreadable: UnreadableInput[];
  ignored: IgnoredInput[];
  /** Symbolic links the walk left out (they lead out of the folder walked): listed in --report. */
  linksNotFollowed: LinkNotFollowed[];
  /** Files changed within --settle: left for the next run, listed in --report. */
  unsettled?: Unsettled[] | undefined;
};

export type Plan = { jobs: Job[]; unreadable: UnreadableInput[]; ignored: IgnoredInput[] };

export async function planJobs(input: PlanInput): Promise<Plan> {
  const jobs: Array<Job | undefined> = new Array<Job | undefined>(input.files.length);
  const unreadable: UnreadableInput[] = [];
  const ignored: Array<IgnoredInput | undefined> = new Array<IgnoredInput | undefined>(input.files.length);
  let next = 0;
  let done = 0;
  const total = input.files.length;
  // Ticks at most every 100 ms (and at the end): a rerun of 20,000 cached files is not 20,000 log lines to build.
  const now = input.now ?? Date.now;
  let ticked = Number.NEGATIVE_INFINITY;
  const tick = (): void => {
    done++;
    if (input.onProgress === undefined) return;
    const t = done === total ? Number.POSITIVE_INFINITY : now();
    if (t - ticked < PROGRESS_EVERY_MS) return;
    ticked = t;
    input.onProgress(done, total);
  };
  const route = routeChooser(input.route, input.inlineMax);
  const identity = input.identity ?? soleIdentity(input.target);
  const known = asLookup(input.known);
  // A file the journal names is probably known: hashed first, so a rerun skips it without uploading it again.
  // Asked only for a large unhashed file: a rerun whose files the stat cache knows never asks.
  const above = input.hashWhileSendingAbove;
  const isNamed = (file: string): boolean => known.names(file);
  // Files whose content is known (hashed, or from the stat cache), looked up in the journal once all are:
  // together, a thousand a query (a database a round trip), not one at a time.
  const hashed: Array<{ file: InputFile; facts: FileFacts; decision: RouteDecision } | undefined> = new Array(
    input.files.length,
  );
  const worker = async (): Promise<void> => {
    while (next < input.files.length) {
      const i = next++;
      const file = input.files[i];
      if (!file) continue;
      if (file.size === 0 && !file.explicit && input.allFiles !== true) {
        // Found in a folder or by a pattern, an empty file is no document (what `file` calls
        // inode/x-empty): skipped and listed as other non-documents are, so a drop folder's stray
        // empty file does not fail every night. Named by itself, it is refused below.
        ignored[i] = { file: file.file, realPath: file.realPath, mimeType: 'inode/x-empty' };
        tick();
        continue;
      }
      if (file.size === 0) {
        // Nothing to extract, and a service would charge or refuse it: refused here, by name.
        unreadable.push({
          file: file.file,
          reason: `${file.file} is empty (0 bytes): there is nothing to extract, so it was not sent`,
        });
        tick();
        continue;
      }
      try {
        const cached = input.cache?.get(file);
        const decision = route(file.size);
        if (
          cached === undefined &&
          above !== undefined &&
          file.size > above &&
          decision.route === 'upload' &&
          !isNamed(file.file)
        ) {
          const mimeType = await fileType(file.path);
          if (file.explicit || input.allFiles === true || isDocumentType(mimeType)) {
            jobs[i] = {
              input: file,
              sha256: '',
              mimeType,
              key: stateKey(`unhashed:${file.realPath}`, identity.primary),
              target: identity.primary,
              decision,
              action: 'submit',
              prior: undefined,
              unhashed: true,
            };
          } else ignored[i] = { file: file.file, realPath: file.realPath, mimeType };
          tick();
          continue;
        }
        let facts = cached;
        if (facts === undefined) {
          const readStarted = (input.now ?? Date.now)();
          facts = await fileFacts(file.path, file.size);
          input.cache?.set(file, facts, readStarted);
        }
        if (!file.explicit && input.allFiles !== true && !isDocumentType(facts.mimeType)) {
          ignored[i] = { file: file.file, realPath: file.realPath, mimeType: facts.mimeType };
          tick();
          continue;
        }
        hashed[i] = { file, facts, decision };
      } catch (err) {
        unreadable.push({
          file: file.file,
          reason: `cannot read ${file.file}: ${describeFsError(err)}`,
        });
      }
      tick();
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.parallel ?? 4, input.files.length) }, worker));
  if (known.prefetch !== undefined) {
    const keys: string[] = [];
    for (const h of hashed)
      if (h !== undefined) for (const t of identity.targets) keys.push(stateKey(h.facts.sha256, t));
    if (keys.length > 0) await known.prefetch(keys);
  }
  hashed.forEach((h, i) => {
    if (h === undefined) return;
    const { key, target, prior } = lookup(known, h.facts.sha256, identity);
    const action = rerunAction(prior, { retryFailed: input.retryFailed, fresh: input.fresh });
    jobs[i] = {
      input: h.file,
      sha256: h.facts.sha256,
      mimeType: h.facts.mimeType,
      key,
      target,
      decision: h.decision,
      action,
      prior,
      resend: resendOf(prior, action, input.fresh === true),
    };
  });
  return {
    jobs: jobs.filter((j): j is Job => j !== undefined),
    unreadable,
    ignored: ignored.filter((x): x is IgnoredInput => x !== undefined),
  };
}

const PROGRESS_EVERY_MS = 100;

/**
 * The decision again, for a document claimed after the plan (another worker may have moved
 * it on since the replay: `concurrent`, see cost/rerun.ts RerunFlags).
 */
export function replan(
  job: Job,
  known: KnownState | undefined,
  retryFailed: boolean,
  concurrent: boolean,
  fresh = false,
): Job {
  const action = rerunAction(known, { retryFailed, fresh, concurrent });
  return { ...job, prior: known, action, resend: resendOf(known, action, fresh) };
}

/** The record of a document this run does not send, from what the journal says of it. */
export function priorRecord(job: Job): DocumentRecord | undefined {
  const p = job.prior;
  if (!p) return undefined;
  const file = job.input.file;
  switch (p.fact) {
    case 'completed':
      return completedRecord({ file, document_id: p.document_id, route: p.route }, p.page_count, p.results);
    case 'failed':
      return errorRecord({ file, document_id: p.document_id, route: p.route }, p.reason);
    case 'sending':
      return errorRecord({ file, document_id: null, route: p.route }, UNCERTAIN_SEND);
    case 'submitted':
      return undefined;
  }
}

export const UNCERTAIN_SEND =
  'an earlier run stopped (crash or kill) while its extract request was in flight, so it may have been charged; ' +
  'it was not sent again to avoid paying twice: --retry-failed resends the same request under the same Idempotency-Key ' +
  '(a service that honours the key answers with the first document and charges nothing; one that ignores it charges this document again)';
