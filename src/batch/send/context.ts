import type { ServiceClient } from '../../client/service-client.ts';
import type { PollPolicy } from '../../client/backoff.ts';
import type { ClientDeps, Log } from '../../client/deps.ts';
import type { Identity } from '../../journal/identity.ts';
import type { JournalWriter, KnownLookup } from '../../journal/journal.ts';
import type { Limiter } from './limiter.ts';
import type { Job } from '../plan/index.ts';
import type { Claim } from '../../journal/state/index.ts';
import type { Outcome, StopReason } from '../outcome.ts';

/** What the send step's pipeline works with: the client, the journal, the limits, and how a document is settled. */
export type PipelineContext = {
  client: ServiceClient;
  journal: JournalWriter;
  /** The run's primary target (a job without one of its own goes under it). */
  target: string;
  /** The parser's targets, under which a file hashed while it is sent is looked up (absent: `target` alone). */
  identity?: Identity | undefined;
  poll: PollPolicy;
  maxCredits: number | undefined;
  deps: ClientDeps;
  sendSlots: Limiter;
  pendingSlots: Limiter;
  /** Aborted on SIGINT/SIGTERM, auth failure and an open circuit: stops the idempotent steps (PUT, GET). */
  signal: AbortSignal;
  log: Log;
  stopped: () => StopReason | undefined;
  stop: (reason: StopReason, message: string) => void;
  settle: (job: Job, outcome: Outcome) => void;
  /**
   * What the journal knew at the start (the replay), for files hashed while they are sent:
   * their content is looked up once its hash is known, before POST extract.
   */
  known?: Pick<KnownLookup, 'get'> | undefined;
  retryFailed?: boolean | undefined;
  fresh?: boolean | undefined;
  /** --password-file was given: an encrypted PDF still locked is one none of its passwords opens (send/locked.ts). */
  passwordsGiven?: boolean | undefined;
  /** Just before a file's bytes are read to be sent (BatchDeps.beforeSend: tests change the file there). */
  beforeSend?: ((file: string) => void | Promise<void>) | undefined;
  /**
   * Takes the content a file turned out to hold (hashed as it was sent) for this worker, beside
   * the job's planned key (claims.ts): undefined when another worker holds it. Absent: granted.
   */
  adopt?: ((job: Job, key: string) => Promise<Claim | undefined>) | undefined;
};
