import { fetchable } from '../../cost/rerun.ts';
import { inert, SERVICE_TEXT_MAX } from '../../inert.ts';
import { type Route, UNEXPLAINED_ERROR } from '../../outputs/record.ts';
import { redact } from '../../redact.ts';
import { failureOutcome } from '../../cost/charge.ts';
import type { Job } from '../plan/index.ts';
import { pollDocument } from './poll.ts';
import type { Sending } from './sending.ts';

/** Polls the document an earlier run got a document_id for (job.prior), holding a polling slot. */
export async function collect(s: Sending, job: Job): Promise<void> {
  const prior = fetchable(job.prior);
  if (prior === undefined) return;
  // An earlier run that knew its pages counted them.
  if (prior.page_count !== undefined && prior.page_count !== null) s.end.counted.set(job.ordinal, prior.page_count);
  try {
    // The first GET at once: the document has had the whole gap between runs to finish.
    await pollUntilDone(s, job, prior.document_id, prior.route, 0, 0, null);
  } catch (err) {
    await s.end.failed(job, prior.route, err, prior.document_id);
  }
}

/**
 * Polls on the guidance's schedule (pollDocument): `firstDelay`, then pollDelay(nextStep), pollDelay(nextStep + 1)...
 * A fresh submission waits 2 s, 3 s, 4.5 s...; a resumed one polls at once, then 2 s, 3 s...
 */
export async function pollUntilDone(
  s: Sending,
  job: Job,
  documentId: string,
  route: Route,
  firstDelay: number,
  nextStep: number,
  knownPages: number | null,
): Promise<void> {
  const { c, end: endings } = s;
  let pageCount = knownPages;
  const end = await pollDocument(
    c.client,
    documentId,
    { policy: c.poll, firstDelay, nextStep, signal: c.signal, deps: c.deps },
    (doc) => {
      pageCount = doc.page_count ?? pageCount;
    },
  );
  if (end.end !== 'finished') {
    const timeout = `still processing after ${Math.round(c.poll.timeoutMs / 1000)} s`;
    const why =
      end.end === 'unanswered'
        ? `${timeout} (the last poll got no answer in time)`
        : end.end === 'timeout'
          ? timeout
          : 'still processing when the run stopped';
    await endings.pending(
      job,
      route,
      documentId,
      pageCount,
      `${why}: rerun the same command to collect it (it will not be charged again)`,
    );
    return;
  }
  const doc = end.doc;
  if (doc.status === 'completed') {
    await endings.completed(job, route, documentId, pageCount, doc.results ?? {});
    return;
  }
  const reason = redact(inert(doc.error ?? UNEXPLAINED_ERROR, SERVICE_TEXT_MAX));
  // Reserved, then refunded by the service (spec: "credits refunded").
  endings.learnPages(job, pageCount);
  endings.charges.refunded += endings.counted.get(job.ordinal) ?? 0;
  // The service judged this document: a plain rerun does not send it again (--retry-failed does).
  await endings.settleFailure(job, route, documentId, reason, {
    ...failureOutcome({ ended: 'refunded' }),
    pageCount,
  });
}
