/**
 * An encrypted PDF this run could not unlock (no --password-file, or none of its passwords):
 * the service would refuse it every night, so it is failed here, unsent, at no cost, and not
 * retryable: a rerun leaves it set aside (cost/rerun.ts) until its file changes, or until a
 * password file unlocks it (then the unlocked bytes are another document: pdf/cut-inputs.ts).
 * Told by the trailer alone (pdf/trailer.ts): no PDF library is loaded for it.
 */
import { ServiceError } from '../../client/errors.ts';
import { lockedMessage } from '../../pdf/document.ts';
import { pdfIsEncrypted } from '../../pdf/trailer.ts';
import { openInput } from '../facts.ts';
import type { Job } from '../plan/jobs.ts';

/** The failure of a job whose PDF is encrypted, or undefined when it is not one. */
export async function lockedPdf(job: Job, passwordsGiven: boolean): Promise<ServiceError | undefined> {
  if (job.mimeType !== 'application/pdf') return undefined;
  const handle = await openInput(job.input.path, job.input.within);
  try {
    if (!(await pdfIsEncrypted(handle, (await handle.stat()).size))) return undefined;
  } finally {
    await handle.close();
  }
  return new ServiceError('rejected', lockedMessage(passwordsGiven), { charge: 'none', retryable: false });
}
