/**
 * An encrypted PDF this run could not unlock (no --password-file, or none of its passwords):
 * the service would refuse it every night, so it is failed here, unsent, at no cost, and not
 * retryable: a rerun leaves it set aside (cost/rerun.ts) until its file changes, or until a
 * password file unlocks it (then the unlocked bytes are another document: batch/discover/cuts.ts).
 * Told by the trailer (pdf/trailer.ts): a plain PDF loads no PDF library. One locked only
 * against editing or printing opens with the empty password, in any reader: it is sent as it is.
 */
import { ServiceError } from '../../client/errors.ts';
import { lockedMessage, openPdf, PdfError } from '../../pdf/document.ts';
import { pdfIsEncrypted } from '../../pdf/trailer.ts';
import { openInput } from '../facts.ts';
import type { Job } from '../plan/index.ts';

/** The failure of a part refused on this machine (src/inputs/refusal.ts): like a locked PDF, unsent, at no cost, set aside. */
export function refusedHere(job: Job): ServiceError | undefined {
  if (job.input.refused === undefined) return undefined;
  return new ServiceError('rejected', job.input.refused, { charge: 'none', retryable: false });
}

/** The failure of a job whose PDF is encrypted and needs a password, or undefined when it does not. */
export async function lockedPdf(job: Job, passwordsGiven: boolean): Promise<ServiceError | undefined> {
  if (job.mimeType !== 'application/pdf') return undefined;
  const handle = await openInput(job.input.path, job.input.within);
  let bytes: Buffer;
  try {
    const { size } = await handle.stat();
    if (!(await pdfIsEncrypted(handle, size))) return undefined;
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  try {
    await openPdf(bytes, [], true);
    return undefined;
  } catch (err) {
    // Damaged as well as encrypted: the service says what it makes of it.
    if (!(err instanceof PdfError && err.code === 'encrypted')) return undefined;
  }
  return new ServiceError('rejected', lockedMessage(passwordsGiven), { charge: 'none', retryable: false });
}
