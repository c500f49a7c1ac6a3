import { randomBytes } from 'node:crypto';
import type { KnownState } from '../journal.ts';
import type { Claim, OpenStateOptions } from './journal-state.ts';
import { describe } from './outage.ts';

/**
 * What a worker of a shared journal (SQLite, PostgreSQL) is whatever keeps it: its name, its
 * lease kept alive, how it leaves, and what a claim answers.
 */

/** This worker's name in the journal, shown by `extract status`: host/pid/nonce (a pid is reused). */
export function workerName(host: string, pid: number): string {
  return `${host}/${pid}/${randomBytes(3).toString('hex')}`;
}

/**
 * Renews this worker's claims every third of the lease while the run goes on. A failed renewal
 * is said once and tried again; one still under way is not started twice.
 */
export class LeaseKeeper {
  readonly #timer: NodeJS.Timeout | undefined;
  #renewing = false;
  #warned = false;

  constructor(where: string, options: OpenStateOptions, leaseMs: number, renew: () => unknown) {
    if (leaseMs <= 0) return;
    const tick = async (): Promise<void> => {
      if (this.#renewing) return;
      this.#renewing = true;
      try {
        await renew();
        this.#warned = false;
      } catch (err) {
        if (!this.#warned)
          options.log('warn', `${where}: could not renew this worker's lease (${describe(err)}); retrying`);
        this.#warned = true;
      } finally {
        this.#renewing = false;
      }
    };
    this.#timer = setInterval(() => void tick(), Math.max(50, Math.floor(leaseMs / 3)));
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}

/**
 * A worker leaves: its lease stops, whatever it still holds is given back so that other workers
 * need not wait for the lease (a dry run holds nothing), and the connection ends. A journal gone
 * (busy past the timeout, the server down) is no error here: the leases run out on their own.
 */
export async function leave(
  lease: LeaseKeeper,
  holds: boolean,
  giveBack: () => unknown,
  end: () => unknown,
): Promise<void> {
  lease.stop();
  try {
    if (holds) await giveBack();
  } catch {
    // The leases run out on their own; a later run of this process (watch) takes them over.
  } finally {
    await end();
  }
}

/** The latest fact of a document: its id and who wrote it. */
export type LastFact = { id: number; worker: string | null } | undefined;

/**
 * What a claim answers for one document: its state, whether another worker wrote its latest
 * fact while this run went on (after the watermark), and whom it was taken from.
 */
export function claimOf(
  key: string,
  known: KnownState | undefined,
  last: LastFact,
  self: { worker: string; watermark: number },
  holder: string | null,
): Claim {
  return {
    key,
    known,
    concurrent: last !== undefined && last.id > self.watermark && last.worker !== self.worker,
    takenFrom: holder !== null && holder !== self.worker ? holder : null,
  };
}
