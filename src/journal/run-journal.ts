import type { Log } from '../client/deps.ts';
import { ExtractError } from '../errors.ts';
import { readBehind } from './earlier.ts';
import type { JournalView, WriteBytes } from './journal.ts';
import type { LockDeps } from './lock.ts';
import { memoryState, openState, parseStateSpec, type StateJournal, type StateSpec } from './state/index.ts';
import { discardJournal, userJournal, type UserJournal } from './state/user-journal.ts';

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
export type RunJournal = {
  journal: StateJournal;
  view: JournalView;
  spec: StateSpec | null;
  /**
   * After a run whose service never answered (a mistyped base URL, a host that is down: nothing
   * submitted, charged or learnt): removes the user's journal again when this run made it.
   */
  discardMade: () => Promise<void>;
};

/** Where a run's journal is, and what comes with it. */
type Place = { spec: StateSpec | null; earlier: readonly string[]; made: string | undefined };

/**
 * Opens the journal a batch run keeps and reads what it knows. Four steps: where it is (the
 * --fresh and PostgreSQL rule), open it (earlier versions' journals taken in as the user's opens,
 * journal/earlier.ts), what it knows (in a dry run, with the earlier journals read behind it),
 * and what to say of it.
 */
export async function openRunJournal(options: RunJournalOptions, deps: RunJournalDeps): Promise<RunJournal> {
  const place = placeOf(options, deps);
  const journal =
    place.spec === null
      ? memoryState()
      : await openState(place.spec, {
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
  // --fresh reads the journal too: it sends every file again, but what the journal knows of a
  // document changes only when this run actually sends it (a run that sends nothing changes nothing).
  // A dry run only reads the older journals: what they know stands behind the journal's own answers.
  const view = options.dryRun ? await readBehind(await journal.view(), place.earlier) : await journal.view();
  if (view.skipped > 0)
    deps.log(
      view.skipped === 1 && view.torn ? 'debug' : 'warn',
      `${journal.where}: ignored ${view.skipped} unreadable line${view.skipped === 1 ? '' : 's'} (a torn last line after a crash is expected)`,
    );
  if (journal.shared && !options.dryRun && options.state !== undefined)
    deps.log('info', `sharing the batch through ${journal.where} as worker ${journal.worker}`);
  const { made } = place;
  const discardMade = async (): Promise<void> => {
    if (made !== undefined) await discardJournal(made, journal.worker);
  };
  return { journal, view, spec: place.spec, discardMade };
}

/**
 * The journal a run keeps: none (--no-state), the one --state names, or by default the user's
 * journal for this service (state/user-journal.ts), which takes in earlier versions' journals
 * as it opens. A shared journal refuses --fresh.
 */
function placeOf(options: RunJournalOptions, deps: Pick<RunJournalDeps, 'cwd' | 'env'>): Place {
  if (options.state === null) return { spec: null, earlier: [], made: undefined };
  const user = options.state === undefined ? userJournal(deps.env, options.baseUrl, deps.cwd, options.dryRun) : NAMED;
  const spec = parseStateSpec(options.state ?? user.path, deps.cwd);
  if (spec.kind === 'postgres' && options.fresh) {
    throw new ExtractError(
      'usage',
      "--fresh with a shared journal (postgres://) would make the workers redo and pay again for each other's documents: use a new database for a new batch",
    );
  }
  // A run that writes takes the earlier journals in as the user's journal opens; a dry run reads them behind it.
  const takeIn = spec.kind === 'sqlite' && !options.dryRun ? { takeIn: user.earlier } : {};
  return { spec: { ...spec, ...takeIn }, earlier: user.earlier, made: user.made };
}

/** A journal --state names: not the user's, so nothing earlier to take in, and none made for the user. */
const NAMED: UserJournal = { path: '', earlier: [], made: undefined };
