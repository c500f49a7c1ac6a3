import { printableBase } from '../paths.ts';
import { ownName } from '../../inputs/part.ts';
import { type DocumentRecord, completedRecord, errorRecord } from '../../outputs/record.ts';
import type { FileStamp, InputFile, UnreadableInput } from '../discover.ts';
import { describeFsError } from '../../errno.ts';
import { fileFacts, fileType, type FileFacts } from '../facts.ts';
import { isDocumentType } from '../../mime/detect.ts';
import { lookup, soleIdentity, type Identity } from '../../journal/identity.ts';
import { asLookup, stateKey, type KnownLookup, type KnownState, type SentRequest } from '../../journal/journal.ts';
import { type Action, rerunAction, resendOf } from '../../cost/rerun.ts';
import type { StatCache } from './stat-cache.ts';
import { routeChooser, type RouteDecision, type RouteFlag } from '../route.ts';
import type { IgnoredInput } from '../summary.ts';

/** A planned document: one input file, what we know of it, and what this run does with it (cost/rerun.ts Action). */
export type Job = {
  /** Its place among the batch's documents, in input order: the key of its record (records.ts). */
  ordinal: number;
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
  /**
   * The file as its content was known: the stat of the descriptor the plan hashed it through, or
   * the walk's when the stat cache knew it (absent: not read yet, a large file hashed on its
   * upload). --move-done and --move-failed move only a file that still has it.
   */
  read?: FileStamp | undefined;
};

/** The name the service sees (file_name): the file's own name, without its folders. */
export function serviceName(job: Job): string {
  // A part's or a URL's file in the part space is numbered: the service is told its own name.
  if (job.input.remote === true) return job.input.rel ?? 'document';
  return job.input.part === undefined ? printableBase(job.input.path) : ownName(job.input.file);
}

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
  /** Called before each file the plan reads (hashes or sniffs): the stat cache did not know it. */
  onRead?: (() => void) | undefined;
  /** Files hashed at once: hashing is disk-bound, a few in parallel is enough. */
  parallel?: number;
  onProgress?: (done: number, total: number) => void;
  /** The ordinal of the first job planned here (the plan step plans a batch a window at a time). */
  firstOrdinal?: number;
};

export type Plan = { jobs: Job[]; unreadable: UnreadableInput[]; ignored: IgnoredInput[] };

export async function planJobs(input: PlanInput): Promise<Plan> {
  const total = input.files.length;
  const jobs: Array<Job | undefined> = new Array<Job | undefined>(total);
  const unreadable: UnreadableInput[] = [];
  const ignored: Array<IgnoredInput | undefined> = new Array<IgnoredInput | undefined>(total);
  // Files whose content is known (hashed, or from the stat cache), looked up in the journal once all are:
  // together, a thousand a query (a database a round trip), not one at a time.
  const hashed: Array<Hashed | undefined> = new Array(total);
  const tick = progressTicker(total, input.onProgress, input.now ?? Date.now);
  const identity = input.identity ?? soleIdentity(input.target);
  const known = asLookup(input.known);
  const ctx: ReadContext = { input, route: routeChooser(input.route, input.inlineMax), identity, known };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const file = input.files[i];
      if (!file) continue;
      // An empty file is decided without a read (and without waiting a turn).
      const read = emptyFileRead(file, input.allFiles === true) ?? (await readInput(file, ctx));
      if (read.kind === 'ignored') ignored[i] = read.ignored;
      else if (read.kind === 'unreadable') unreadable.push(read.unreadable);
      else if (read.kind === 'unhashed') jobs[i] = read.job;
      else hashed[i] = read.hashed;
      tick();
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.parallel ?? 4, total) }, worker));
  if (known.prefetch !== undefined) {
    const keys: string[] = [];
    for (const h of hashed)
      if (h !== undefined) for (const t of identity.targets) keys.push(stateKey(h.facts.sha256, t));
    if (keys.length > 0) await known.prefetch(keys);
  }
  hashed.forEach((h, i) => {
    if (h !== undefined) jobs[i] = hashedJob(h, known, identity, input);
  });
  let ordinal = input.firstOrdinal ?? 0;
  const planned: Job[] = [];
  for (const job of jobs) {
    if (job === undefined) continue;
    job.ordinal = ordinal++;
    planned.push(job);
  }
  return {
    jobs: planned,
    unreadable,
    ignored: ignored.filter((x): x is IgnoredInput => x !== undefined),
  };
}

/** A document file whose content facts are known, with its route: planned once the journal is asked. */
type Hashed = { file: InputFile; facts: FileFacts; decision: RouteDecision; read: FileStamp | undefined };

type ReadContext = {
  input: PlanInput;
  route: (size: number) => RouteDecision;
  identity: Identity;
  known: KnownLookup;
};

/** What the plan makes of one input file before the journal is asked. */
type Read =
  | { kind: 'ignored'; ignored: IgnoredInput }
  | { kind: 'unreadable'; unreadable: UnreadableInput }
  | { kind: 'unhashed'; job: Job }
  | { kind: 'hashed'; hashed: Hashed };

/** An empty file's Read: no document to send (undefined: the file is not empty). */
function emptyFileRead(file: InputFile, allFiles: boolean): Read | undefined {
  const empty = emptyFileRule(file, allFiles);
  if (empty === 'skip') {
    // Found in a folder or by a pattern, an empty file is no document (what `file` calls
    // inode/x-empty): skipped and listed as other non-documents are, so a drop folder's stray
    // empty file does not fail every night. Named by itself, it is refused below.
    return { kind: 'ignored', ignored: { file: file.file, realPath: file.realPath, mimeType: 'inode/x-empty' } };
  }
  if (empty === 'refuse') {
    // Nothing to extract, and a service would charge or refuse it: refused here, by name.
    return {
      kind: 'unreadable',
      unreadable: {
        file: file.file,
        reason: `${file.file} is empty (0 bytes): there is nothing to extract, so it was not sent`,
      },
    };
  }
  return undefined;
}

async function readInput(file: InputFile, ctx: ReadContext): Promise<Read> {
  const { input } = ctx;
  try {
    // A part's file is new each run (the part space): its stamp says nothing, its content is hashed.
    const cache = file.part === undefined && file.remote !== true ? input.cache : undefined;
    const cached = cache?.get(file);
    const decision = ctx.route(file.size);
    // A file the journal names is probably known: hashed first, so a rerun skips it without uploading it again.
    // Asked only for a large unhashed file: a rerun whose files the stat cache knows never asks.
    if (
      hashesWhileSending(cached !== undefined, input.hashWhileSendingAbove, file.size, decision) &&
      !ctx.known.names(file.file)
    ) {
      input.onRead?.();
      const mimeType = await fileType(file.path, file.within);
      if (!wanted(file, input.allFiles === true, mimeType))
        return { kind: 'ignored', ignored: { file: file.file, realPath: file.realPath, mimeType } };
      const target = ctx.identity.primary;
      const key = stateKey(`unhashed:${file.realPath}`, target);
      return {
        kind: 'unhashed',
        job: {
          ordinal: -1,
          input: file,
          sha256: '',
          mimeType,
          key,
          target,
          decision,
          action: 'submit',
          prior: undefined,
          unhashed: true,
        },
      };
    }
    let facts = cached;
    let read = file.stamp;
    if (facts === undefined) {
      input.onRead?.();
      const readStarted = (input.now ?? Date.now)();
      const fresh = await fileFacts(file.path, file.size, file.within);
      facts = { sha256: fresh.sha256, mimeType: fresh.mimeType };
      read = fresh.read;
      // Cached under the stat of what was hashed: a file changed since the walk is not cached under the walk's.
      cache?.set({ ...file, stamp: read }, facts, readStarted);
    }
    if (!wanted(file, input.allFiles === true, facts.mimeType))
      return { kind: 'ignored', ignored: { file: file.file, realPath: file.realPath, mimeType: facts.mimeType } };
    return { kind: 'hashed', hashed: { file, facts, decision, read } };
  } catch (err) {
    return {
      kind: 'unreadable',
      unreadable: { file: file.file, reason: `cannot read ${file.file}: ${describeFsError(err)}` },
    };
  }
}

/** An empty file: skipped as no document when found in a folder or by a pattern, refused when named by itself. */
export function emptyFileRule(
  file: Pick<InputFile, 'size' | 'explicit'>,
  allFiles: boolean,
): 'skip' | 'refuse' | undefined {
  if (file.size !== 0) return undefined;
  return !file.explicit && !allFiles ? 'skip' : 'refuse';
}

/**
 * Whether the run sends this file: named by itself, --all-files, or a document type (mime/detect.ts
 * isDocumentType). Files found in a directory, by a pattern or in an archive that are something
 * else (notes, a GIF or WebP image the service cannot read) are skipped unless --all-files.
 */
function wanted(file: InputFile, allFiles: boolean, mimeType: string): boolean {
  return file.explicit || allFiles || isDocumentType(mimeType);
}

/**
 * Whether a file may be hashed while it is uploaded rather than before: not in the stat cache,
 * above the size given, and sent by upload (the caller also asks the journal whether it names the file).
 */
export function hashesWhileSending(
  cached: boolean,
  above: number | undefined,
  size: number,
  decision: RouteDecision,
): boolean {
  return !cached && above !== undefined && size > above && decision.route === 'upload';
}

/** The job of a hashed file, from what the journal knows of its content. */
function hashedJob(h: Hashed, known: KnownLookup, identity: Identity, input: PlanInput): Job {
  const { key, target, prior } = lookup(known, h.facts.sha256, identity);
  const action = rerunAction(prior, { retryFailed: input.retryFailed, fresh: input.fresh });
  return {
    ordinal: -1,
    input: h.file,
    sha256: h.facts.sha256,
    mimeType: h.facts.mimeType,
    key,
    target,
    decision: h.decision,
    action,
    prior,
    resend: resendOf(prior, action, input.fresh === true),
    read: h.read,
  };
}

/** Counts files read; tells onProgress at most every 100 ms (and at the end): a rerun of 20,000 cached files is not 20,000 log lines to build. */
function progressTicker(
  total: number,
  onProgress: ((done: number, total: number) => void) | undefined,
  now: () => number,
): () => void {
  let done = 0;
  let ticked = Number.NEGATIVE_INFINITY;
  return () => {
    done++;
    if (onProgress === undefined) return;
    const t = done === total ? Number.POSITIVE_INFINITY : now();
    if (t - ticked < PROGRESS_EVERY_MS) return;
    ticked = t;
    onProgress(done, total);
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
