import { ServiceError } from '../../client/errors.ts';
import { createdNothing } from '../../cost/charge.ts';
import type { SentRequest } from '../../journal/journal.ts';
import type { Route } from '../../outputs/record.ts';
import { serviceName, type Job } from '../plan/index.ts';
import { idempotencyKey } from './idempotency.ts';
import type { Sending } from './sending.ts';

/**
 * The one step that costs credits. The journal brackets it: `sending` (with the request
 * and its Idempotency-Key) before, and `unsent` when the service answered without
 * creating a document, so that only a crash while the request is in flight leaves the
 * uncertain `sending` as the last fact. No answer at all, or a proxy's 502/504, leaves
 * the outcome unknown: the request is remembered for the `failed` fact.
 */
export async function extractCharged<T>(
  s: Sending,
  job: Job,
  route: Route,
  request: SentRequest,
  send: () => Promise<T>,
): Promise<T> {
  const { c, end } = s;
  await c.journal.append({
    fact: 'sending',
    ...end.common(job),
    route,
    request,
    ...end.countedFor(job, null),
  });
  try {
    const answer = await send();
    end.uncertain.delete(job.key);
    return answer;
  } catch (err) {
    // The client's typed answer: nothing was created (refused, never sent), or it may have been.
    if (err instanceof ServiceError && createdNothing(err.charge)) {
      end.uncertain.delete(job.key);
      await c.journal.append({ fact: 'unsent', ...end.common(job), route });
    } else if (err instanceof ServiceError && err.charge === 'refunded') {
      // The service made a document, failed it and refunded it: known, not in doubt.
      end.uncertain.delete(job.key);
    } else {
      end.uncertain.set(job.key, request);
    }
    throw err;
  }
}

/** A new extract request of this job: the name and type it is sent with, and its key. */
export function newRequest(s: Sending, job: Job, storagePath: string | undefined): SentRequest {
  const sent = {
    file_name: serviceName(job),
    file_type: job.mimeType,
    ...(storagePath !== undefined ? { storage_path: storagePath } : {}),
  };
  return { ...sent, idempotency_key: idempotencyKey(job.sha256, job.target ?? s.c.target, sent) };
}
