import { pollDelay, type PollPolicy } from '../../client/backoff.ts';
import type { ClientDeps } from '../../client/deps.ts';
import type { FetchedDocument, ServiceClient } from '../../client/service-client.ts';

/**
 * The poll deadline also bounds a GET in flight (a slow-drip answer), in real time as the HTTP
 * client's clock is real; never less than this, so a poll just before the deadline can still answer.
 * The one read a stopped run makes to learn a pending document's pages has the same bound.
 */
export const LAST_POLL_MIN_MS = 5_000;

export type PollOptions = {
  policy: PollPolicy;
  /** Wait before the first GET (0: at once). */
  firstDelay: number;
  /** The step of pollDelay used after the first GET: a fresh submission waits 2 s, then 3 s...; a resumed one polls at once, then 2 s. */
  nextStep: number;
  /** At most this many GETs (`extract get` without --wait: one). */
  maxPolls?: number;
  /** Aborted when the run stops: the loop ends with `stopped`, the GET in flight throws. */
  signal?: AbortSignal;
  deps: Pick<ClientDeps, 'now' | 'sleep'>;
};

/**
 * How polling ended: the document finished (completed or error), or it is still processing
 * because the deadline passed (`timeout`; `unanswered` when the last GET got no answer in
 * time), the run stopped, or the polls allowed were spent (`last` is the latest answer seen).
 */
export type PollEnd =
  | { end: 'finished'; doc: FetchedDocument }
  | { end: 'timeout' | 'unanswered' | 'stopped' | 'spent'; last: FetchedDocument | undefined };

/**
 * The one poll loop (the pipeline's upload-and-poll and resume, and `extract get`): GET the
 * document on the spec's guidance (pollDelay) until it ends or the deadline (policy.timeoutMs
 * from now). Errors of a GET (after the client's own retries) are thrown to the caller.
 */
export async function pollDocument(
  client: ServiceClient,
  documentId: string,
  options: PollOptions,
  onAnswer?: (doc: FetchedDocument) => void,
): Promise<PollEnd> {
  const { now, sleep } = options.deps;
  const { signal } = options;
  const deadline = now() + options.policy.timeoutMs;
  let delay = options.firstDelay;
  let last: FetchedDocument | undefined;
  for (let step = options.nextStep, polls = 0; ; step++, polls++) {
    if (options.maxPolls !== undefined && polls >= options.maxPolls) return { end: 'spent', last };
    const left = deadline - now();
    if (left <= 0) return { end: 'timeout', last };
    if (signal?.aborted) return { end: 'stopped', last };
    if (delay > 0) await sleep(Math.min(delay, left), signal);
    if (signal?.aborted) return { end: 'stopped', last };
    const pollLimit = AbortSignal.timeout(Math.max(deadline - now(), LAST_POLL_MIN_MS));
    try {
      last = await client.getDocument(documentId, signal ? AbortSignal.any([signal, pollLimit]) : pollLimit);
    } catch (err) {
      if (!pollLimit.aborted || signal?.aborted === true) throw err;
      return { end: 'unanswered', last };
    }
    onAnswer?.(last);
    if (last.status !== 'processing') return { end: 'finished', doc: last };
    delay = pollDelay(step, options.policy);
  }
}
