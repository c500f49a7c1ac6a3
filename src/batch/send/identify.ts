import { resendOf, rerunAction } from '../../cost/rerun.ts';
import { inert } from '../../inert.ts';
import { lookup, soleIdentity } from '../../journal/identity.ts';
import type { SentRequest } from '../../journal/journal.ts';
import type { Route } from '../../outputs/record.ts';
import { priorRecord, type Job } from '../plan/index.ts';
import { collect } from './collect.ts';
import { notSubmitted } from './endings.ts';
import { routeOf, type Sending } from './sending.ts';

/** A job as its bytes were read to be sent: keyed by them (`known`: nothing to send, see identify). */
export type AsRead = { job: Job; resend?: SentRequest | undefined; known?: () => Promise<void> };

/**
 * The job as its bytes were read to be sent (`sha256`: of those bytes). A file hashed while it
 * is uploaded learns its key here; a file whose bytes are not the ones its plan hashed (it was
 * rewritten or replaced in between) is keyed by what is sent, never by the planned content,
 * which stays as it was in the journal: a later file with that content is sent, not given
 * this one's results.
 */
export async function asRead(s: Sending, job: Job, sha256: string, route: Route): Promise<AsRead> {
  if (job.unhashed !== true && sha256 === job.sha256) return { job, resend: job.resend };
  if (job.unhashed !== true)
    s.c.log(
      'warn',
      `${inert(job.input.file)}: changed after it was read (its content is not the one planned): sent as it is now, under the hash of the bytes sent`,
    );
  return identify(s, job, sha256, route);
}

/**
 * A file hashed as it was sent: its content looked up in the journal (the replay, and
 * what this run wrote) before anything is charged. New content is sent; content the journal
 * knows is handled as a rerun handles it (a renamed copy of a completed document is recorded,
 * never sent again); content this run is sending under another name takes that outcome.
 */
async function identify(s: Sending, planned: Job, sha256: string, route: Route): Promise<AsRead> {
  const { c } = s;
  const { unhashed: _, resend: _planned, ...rest } = planned;
  const found = lookup(c.known ?? new Map(), sha256, c.identity ?? soleIdentity(c.target));
  const job: Job = { ...rest, sha256, key: found.key, target: found.target };
  const sibling = s.inRun.get(job.key);
  if (sibling !== undefined) {
    return {
      job,
      known: async () => {
        const outcome = await sibling;
        c.settle(job, { ...outcome, record: { ...outcome.record, file: job.input.file } });
      },
    };
  }
  s.inRun.open(job.key);
  // A shared journal: the content is claimed here before it is spent on (another worker may hold it).
  const claim = c.adopt === undefined ? undefined : await c.adopt(planned, job.key);
  if (c.adopt !== undefined && claim === undefined) {
    const why = 'another worker is sending the content this file now holds: rerun the same command to collect it';
    return { job, known: async () => c.settle(job, notSubmitted(job, route, why)) };
  }
  const prior = claim === undefined ? found.prior : claim.known;
  const action = rerunAction(prior, {
    retryFailed: c.retryFailed === true,
    fresh: c.fresh,
    concurrent: claim?.concurrent === true,
  });
  const known: Job = { ...job, prior, action };
  if (action === 'submit') {
    const resend = resendOf(prior, action, c.fresh === true);
    // An uncertain request of this content is resent only by its own route's shape.
    const fits = resend !== undefined && (resend.storage_path === undefined) === (route === 'inline');
    return { job: known, resend: fits ? resend : undefined };
  }
  c.log('info', `${job.input.file}: its content is known to the journal (${action}); not sent again`);
  return {
    job: known,
    known: async () => {
      if (action === 'resume') return collect(s, known);
      const record = priorRecord(known);
      if (record !== undefined) c.settle(known, { kind: action === 'done' ? 'completed' : 'failed', record });
    },
  };
}

/**
 * A file planned with one content that turned out to hold another: whatever waits for the
 * planned content's outcome in this run (a large copy hashed on its upload) is told it was not
 * sent, so it is never given the results of what this file holds now.
 */
export function abandonInRun(s: Sending, planned: Job, now: Job): void {
  s.inRun.abandon(
    planned.key,
    notSubmitted(now, routeOf(planned), 'the file sent with this content changed first: rerun the same command'),
  );
}
