import type { Log } from '../client/deps.ts';
import { ExtractError } from '../errors.ts';
import { knownFromMap, type JournalView, type KnownLookup, type WriteBytes } from './journal.ts';
import type { LockDeps } from './lock.ts';
import { memoryState, openState, parseStateSpec, type StateJournal, type StateSpec } from './state/index.ts';
import { earlierJournals, makeJournalFolder, userJournalPath } from './state/user-journal.ts';

/** What a batch run asks of its journal: where it is (--state, --no-state, or the user's), and how to hold it. */
export type RunJournalOptions = {
  /** --state: undefined for the user's journal of this service, null for none. */
  state?: string | null | undefined;
  baseUrl: string;
  dryRun: boolean;
  fresh: boolean;
  /** --lease, in ms. */
  lease: number;
  /** --state-wait, in ms. */
  stateWait: number;
};

export type RunJournalDeps = {
  cwd: string;
  env: Record<string, string | undefined>;
  lock?: LockDeps | undefined;
  writeJournal?: WriteBytes | undefined;
  log: Log;
  /** Called as soon as the journal is open, so that the run closes it whatever happens next. */
  opened: (journal: StateJournal) => void;
  /** The journal refused a write. */
  writeFailed: (message: string) => void;
};

/** The run's journal, what it knows, and where it is (null: --no-state, a journal in memory). */
export type RunJournal = { journal: StateJournal; view: JournalView; spec: StateSpec | null };

/**
 * Opens the journal a batch run keeps and reads what it knows: the --fresh and PostgreSQL rule,
 * earlier versions' journals taken in (or, in a dry run, read behind it).
 */
export async function openRunJournal(options: RunJournalOptions, deps: RunJournalDeps): Promise<RunJournal> {
  // Earlier versions' journals (the user's JSONL, this folder's): taken in once (a dry run only reads them).
  const earlier = options.state === undefined ? earlierJournals(deps.env, options.baseUrl, deps.cwd) : [];
  const spec = stateSpecOf(options, earlier, deps);
  const journal = await openJournal(spec, options, deps);
  const view = await replayJournal(journal, spec, earlier, options, deps);
  return { journal, view, spec };
}

/**
 * The journal a run keeps: none (--no-state), the one --state names, or by default the user's
 * journal for this service (state/user-journal.ts), its folder made on first use.
 */
function stateSpecOf(options: RunJournalOptions, earlier: string[], deps: RunJournalDeps): StateSpec | null {
  if (options.state === null) return null;
  if (options.state !== undefined) return parseStateSpec(options.state, deps.cwd);
  const path = userJournalPath(deps.env, options.baseUrl);
  if (options.dryRun) return parseStateSpec(path, deps.cwd);
  makeJournalFolder(path);
  const spec = parseStateSpec(path, deps.cwd);
  return spec.kind === 'sqlite' ? { ...spec, takeIn: earlier } : spec;
}

async function openJournal(
  spec: StateSpec | null,
  options: RunJournalOptions,
  deps: RunJournalDeps,
): Promise<StateJournal> {
  if (spec?.kind === 'postgres' && options.fresh) {
    throw new ExtractError(
      'usage',
      "--fresh with a shared journal (postgres://) would make the workers redo and pay again for each other's documents: use a new database for a new batch",
    );
  }
  const journal =
    spec === null
      ? memoryState()
      : await openState(spec, {
          readOnly: options.dryRun,
          leaseMs: options.lease,
          outageMs: options.stateWait,
          log: deps.log,
          lock: deps.lock,
          write: deps.writeJournal,
          env: deps.env,
          onWriteFailed: (err) => deps.writeFailed(err.message),
        });
  deps.opened(journal);
  return journal;
}

/** What the journal knows, with earlier versions' journals taken in (or, in a dry run, read behind it). */
async function replayJournal(
  journal: StateJournal,
  spec: StateSpec | null,
  earlier: string[],
  options: RunJournalOptions,
  deps: RunJournalDeps,
): Promise<JournalView> {
  const { log } = deps;
  // --fresh reads the journal too: it sends every file again, but what the journal knows of a
  // document changes only when this run actually sends it (a run that sends nothing changes nothing).
  let replay: JournalView = await viewOf(spec === null ? undefined : journal);
  if (options.dryRun && earlier.length > 0) {
    // A dry run only reads the older journals: what they know stands behind the journal's own answers.
    const { readJournal } = await import('./journal-read.ts');
    const olds = await Promise.all(earlier.map((path) => readJournal(path)));
    const parsers = new Map(replay.parsers);
    for (const old of olds) for (const [key, fact] of old.parsers) if (!parsers.has(key)) parsers.set(key, fact);
    replay = {
      ...replay,
      known: behind(
        replay.known,
        olds.map((old) => knownFromMap(old.known)),
      ),
      parsers,
    };
  }
  if (replay.skipped > 0)
    log(
      replay.skipped === 1 && replay.torn ? 'debug' : 'warn',
      `${journal.where}: ignored ${replay.skipped} unreadable line${replay.skipped === 1 ? '' : 's'} (a torn last line after a crash is expected)`,
    );
  if (journal.shared && !options.dryRun && options.state !== undefined)
    log('info', `sharing the batch through ${journal.where} as worker ${journal.worker}`);
  return replay;
}

/** What a run starts from: the journal's lookups (its projection). */
async function viewOf(journal: StateJournal | undefined): Promise<JournalView> {
  if (journal === undefined) return { known: knownFromMap(new Map()), parsers: new Map(), skipped: 0, torn: false };
  return journal.view();
}

/** Lookups in `first`, then (for what it does not know) in each of `rest`. */
function behind(first: KnownLookup, rest: KnownLookup[]): KnownLookup {
  const all = [first, ...rest];
  return {
    get: (key) => {
      for (const known of all) {
        const fact = known.get(key);
        if (fact !== undefined) return fact;
      }
      return undefined;
    },
    names: (file) => all.some((known) => known.names(file)),
    targets: () => new Set(all.flatMap((known) => [...known.targets()])),
  };
}
