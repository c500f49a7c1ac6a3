import pg from 'pg';
import { ExtractError } from '../../errors.ts';
import type { OpenStateOptions } from './journal-state.ts';
import { describe, OutageWait } from './outage.ts';

/** At least a second, and the lease otherwise (an integer: SET takes no bound parameter). */
function idleInTransactionMs(leaseMs: number): number {
  return Math.max(1_000, Math.round(Number.isFinite(leaseMs) ? leaseMs : 1_000));
}

/** The pool, with every operation retried while the database is briefly unreachable (outage.ts). */
export class Db {
  readonly #pool: pg.Pool;
  readonly #options: OpenStateOptions;
  readonly #wait: OutageWait;

  constructor(pool: pg.Pool, where: string, options: OpenStateOptions) {
    this.#pool = pool;
    this.#options = options;
    this.#wait = new OutageWait(options, {
      worthWaiting: transient,
      refusal: (what, err) =>
        new ExtractError(
          'state',
          `could not ${what} in the state database ${where}: ${describe(err)}; check the URL, the user's rights and the server, then rerun the same command`,
          { cause: err },
        ),
      waiting: (outageMs, err) =>
        `${where}: the state database is unreachable (${describe(err)}); waiting up to ${Math.round(outageMs / 1000)} s for it`,
      gaveUp: (_what, seconds, err) =>
        `the state database ${where} has been unreachable for ${seconds} s (${describe(err)}): stopped; nothing recorded is lost, rerun the same command when it is back (submitted documents are collected, not paid again)`,
      back: (seconds) => `${where}: reachable again after ${seconds} s`,
      pauseMs: (n) => Math.min(5_000, 200 * 2 ** Math.min(n, 5)),
    });
  }

  query<R extends pg.QueryResultRow>(what: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return this.#wait.run(what, () => this.#pool.query<R>(sql, params));
  }

  /** Reads through the pool (each statement its own snapshot), retried as one. */
  read<T>(what: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
    return this.#wait.run(what, () => work(this.#pool));
  }

  /** One attempt, no retry: lease renewal and the last release, which must not hold a run up. */
  async once(sql: string, params: unknown[]): Promise<void> {
    await this.#pool.query(sql, params);
  }

  transaction<T>(what: string, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#wait.run(what, async () => {
      const client = await this.#pool.connect();
      let broken: Error | undefined;
      // A connection cut mid-transaction (a server restart) is reported by the failing query;
      // without a listener, the client's own 'error' event would end the process.
      const onError = (err: Error): void => {
        broken = err;
      };
      client.on('error', onError);
      try {
        // A worker paused inside a transaction (SIGSTOP, a frozen VM) would hold its rows locked for
        // as long as it sleeps, and the others wait for documents it can never give back: the server
        // ends such a transaction once it has been idle past the lease, as the worker's claims end.
        // One round trip for both (no bound parameters: the simple protocol takes two statements).
        await client.query(
          `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${idleInTransactionMs(this.#options.leaseMs)}`,
        );
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        broken = err instanceof Error ? err : new Error(String(err));
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onError);
        // A connection that failed mid-transaction is not given back to the pool.
        client.release(broken !== undefined && transient(broken) ? broken : undefined);
      }
    });
  }

  async end(): Promise<void> {
    await this.#pool.end().catch(() => undefined);
  }
}

/**
 * Worth waiting for: the connection failed or was cut (a restart, a network blip, a full
 * server), or the server asked for a retry. An error the server answered with for our
 * statement (bad password, missing rights, no such database) is not.
 */
function transient(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) {
    const code = err.code ?? '';
    return (
      code.startsWith('08') ||
      code === '57P01' ||
      code === '57P02' ||
      code === '57P03' ||
      code === '53300' ||
      code === '40001' ||
      code === '40P01' ||
      // The server ended a transaction this worker left idle past the lease (a pause): do it again.
      code === '25P03'
    );
  }
  // A bug of ours is not an outage.
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return false;
  const code = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  // A host that does not exist is a typo, not an outage.
  return code !== 'ENOTFOUND';
}
