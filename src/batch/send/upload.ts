import type { FileHandle } from 'node:fs/promises';
import { ServiceError } from '../../client/errors.ts';
import { uploadAgain } from '../../cost/attempt.ts';
import type { SentRequest } from '../../journal/journal.ts';
import type { Route } from '../../outputs/record.ts';
import { stampOf } from '../discover.ts';
import { hashOf, openInput } from '../facts.ts';
import { serviceName, type Job } from '../plan/index.ts';
import { extractCharged, newRequest } from './charged.ts';
import { abandonInRun, asRead } from './identify.ts';
import { pageCountOf, type Sending } from './sending.ts';

/**
 * What became of a file hashed while it was uploaded, once its content was looked up: sent
 * (a document_id), or already known (completed, submitted, left by an earlier run, or being
 * sent by this run under another name), in which case nothing was charged.
 */
export type Sent =
  | { job: Job; documentId: string; pageCount: number | null }
  | { job: Job; known: () => Promise<void> };

/** How often an expired upload address is replaced before the file is reported as failed. */
const TICKET_ATTEMPTS = 3;

/**
 * upload-url, PUT, extract. Returns the document_id, journaled before anything else happens.
 * `resend`: an earlier, uncertain submission of an uploaded storage path, submitted again
 * unchanged first (no new upload); if the service no longer knows the path, upload again.
 */
export async function sendUpload(
  s: Sending,
  planned: Job,
  route: Route,
  resend: SentRequest | undefined,
  keyed: (job: Job) => void,
): Promise<Sent> {
  // A resend of an uncertain storage path sends no bytes: the file is opened only for an upload.
  let file: { handle: FileHandle; size: number } | undefined;
  try {
    return await upload(s, planned, route, resend, keyed, async () => {
      if (file === undefined) {
        const handle = await openInput(planned.input.path, planned.input.within);
        file = { handle, size: 0 };
        const info = await handle.stat();
        file.size = info.size;
        s.read.set(planned.ordinal, stampOf(info));
      }
      return file;
    });
  } finally {
    await file?.handle.close();
  }
}

/**
 * upload-url, PUT and extract, each upload of the same descriptor (`opened`): its size as it
 * was opened, hashed on the way, and keyed by that hash before POST extract, as a file read whole is (identify.ts).
 */
async function upload(
  s: Sending,
  planned: Job,
  route: Route,
  resend: SentRequest | undefined,
  keyed: (job: Job) => void,
  opened: () => Promise<{ handle: FileHandle; size: number }>,
): Promise<Sent> {
  const { c } = s;
  let job = planned;
  let size = job.input.size;
  if (job.unhashed !== true) s.inRun.open(job.key);
  for (let attempt = 1; ; attempt++) {
    let request: SentRequest;
    const issuedAt = c.deps.now();
    if (attempt === 1 && resend?.storage_path !== undefined) {
      request = resend;
    } else {
      const ticket = await c.client.uploadUrl({ file_name: serviceName(job), file_type: job.mimeType }, c.signal);
      let sha256: string | undefined;
      const file = await opened();
      size = file.size;
      try {
        const source = { path: file.handle, name: job.input.file, size, type: job.mimeType };
        ({ sha256 } = await c.client.putBytes(ticket, source, c.signal));
      } catch (err) {
        if (err instanceof ServiceError && err.kind === 'ticket_expired' && attempt < TICKET_ATTEMPTS) {
          c.log(
            'info',
            `${job.input.file}: the upload address expired (valid ${ticket.expires_in} s); asking for a new one`,
          );
          continue;
        }
        throw err;
      }
      // Hashed on the way (one read pass); read again only if the storage answered before taking every byte.
      sha256 ??= await hashOf(file.handle, size);
      let again: SentRequest | undefined;
      if (job.unhashed === true || sha256 !== job.sha256) {
        const before = job;
        const read = await asRead(s, job, sha256, route);
        job = read.job;
        keyed(job);
        if (before.unhashed !== true) abandonInRun(s, before, job);
        if (read.known !== undefined) return { job, known: read.known };
        // --retry-failed of an uncertain upload: the same request again (same Idempotency-Key), this upload unused.
        again = read.resend;
      }
      request = again ?? newRequest(s, job, ticket.storage_path);
    }
    if (c.signal.aborted) {
      // Uploaded but not submitted: nothing is charged, a rerun starts over.
      throw new ServiceError('aborted', 'stopped before submitting');
    }
    const storagePath = request.storage_path ?? '';
    try {
      const accepted = await extractCharged(s, job, route, request, () =>
        c.client.extractStored(
          {
            storage_path: storagePath,
            file_name: request.file_name,
            file_type: request.file_type,
            file_size: size,
          },
          request.idempotency_key,
        ),
      );
      // A document an earlier run counted keeps its count, so that a run collecting it does not count it again.
      const recognised = s.end.recognise(job, accepted.document_id);
      await c.journal.append({
        fact: 'submitted',
        ...s.end.common(job),
        route,
        document_id: accepted.document_id,
        ...(recognised !== undefined ? { page_count: recognised } : {}),
      });
      c.log('debug', `${job.input.file}: submitted as ${accepted.document_id}`);
      return { job, documentId: accepted.document_id, pageCount: pageCountOf(accepted) };
    } catch (err) {
      // A storage path the service does not know (404) or no longer has (410) was refused
      // before any charge: upload again.
      if (err instanceof ServiceError && uploadAgain(err.status) && attempt < TICKET_ATTEMPTS) {
        c.log(
          'info',
          `${job.input.file}: the service refused the storage path (${err.message}); uploading again (${Math.round((c.deps.now() - issuedAt) / 1000)} s after the ticket)`,
        );
        continue;
      }
      throw err;
    }
  }
}
