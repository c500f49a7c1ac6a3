import { realSleep } from '../../client/deps.ts';
import { ExtractError } from '../../errors.ts';
import { redactUrl } from '../../redact.ts';
import { ClaimLostError, type OpenStateOptions } from './journal-state.ts';

/** How long a shared journal may stay unreachable or locked before the run stops (--state-wait's default). */
export const DEFAULT_STATE_WAIT_MS = 60_000;

/** What one backend says of its outages; the waiting is the same for both (SQLite locked, PostgreSQL down). */
export type OutageRules = {
  /** A lock another process holds, a connection cut: worth waiting for. Anything else is refused at once. */
  worthWaiting(err: unknown): boolean;
  /** What to tell the user of an error not worth waiting for. */
  refusal(what: string, err: unknown): Error;
  /** Said once when an outage begins. */
  waiting(outageMs: number, err: unknown): string;
  /** The outage lasted past --state-wait: the run stops. */
  gaveUp(what: string, seconds: number, err: unknown): string;
  /** Said when the journal answers again (nothing: silent). */
  back?(seconds: number): string;
  /** The pause before the n-th retry. */
  pauseMs(n: number): number;
};

/**
 * Every operation of a shared journal goes through `run`: an outage is waited for, retried
 * with a growing pause, up to --state-wait; a lost claim or an ExtractError passes through.
 */
export class OutageWait {
  readonly #options: OpenStateOptions;
  readonly #rules: OutageRules;
  #since: number | undefined;

  constructor(options: OpenStateOptions, rules: OutageRules) {
    this.#options = options;
    this.#rules = rules;
  }

  async run<T>(what: string, attempt: () => T | Promise<T>): Promise<T> {
    const outageMs = this.#options.outageMs ?? DEFAULT_STATE_WAIT_MS;
    const sleep = this.#options.sleep ?? realSleep;
    for (let n = 0; ; n++) {
      try {
        const out = await attempt();
        if (this.#since !== undefined) {
          const said = this.#rules.back?.(Math.round((Date.now() - this.#since) / 1000));
          if (said !== undefined) this.#options.log('info', said);
          this.#since = undefined;
        }
        return out;
      } catch (err) {
        if (err instanceof ExtractError || err instanceof ClaimLostError) throw err;
        if (!this.#rules.worthWaiting(err)) throw this.#rules.refusal(what, err);
        const now = Date.now();
        if (this.#since === undefined) {
          this.#since = now;
          this.#options.log('warn', this.#rules.waiting(outageMs, err));
        }
        if (now - this.#since >= outageMs) {
          throw new ExtractError('state', this.#rules.gaveUp(what, Math.round((now - this.#since) / 1000), err), {
            cause: err,
          });
        }
        await sleep(this.#rules.pauseMs(n));
      }
    }
  }
}

/**
 * An error as a user may read it: its message, with its code when that names something to look
 * up (ECONNREFUSED, a SQLSTATE); Node's own ERR_ codes say nothing more. Secrets redacted.
 */
export function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = typeof err === 'object' && err !== null ? Reflect.get(err, 'code') : undefined;
  const named = typeof code === 'string' && !code.startsWith('ERR_') && !message.includes(code);
  return redactUrl(named ? `${code}: ${message}` : message);
}
