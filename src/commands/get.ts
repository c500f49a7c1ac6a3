import type { Writable } from 'node:stream';
import type { PollPolicy } from '../client/backoff.ts';
import type { ClientDeps } from '../client/deps.ts';
import { ServiceError } from '../client/errors.ts';
import { ServiceClient, type FetchedDocument } from '../client/service-client.ts';
import { EXIT_CODES, ExtractError } from '../errors.ts';
import { inert } from '../inert.ts';
import {
  checkExplode,
  createStreamWriter,
  isStreamed,
  prepareOutput,
  resolveOutput,
  writeOutputs,
} from '../outputs/index.ts';
import {
  type DocumentRecord,
  completedRecord,
  errorRecord,
  pendingRecord,
  UNEXPLAINED_ERROR,
} from '../outputs/record.ts';
import { DEFAULT_MISSING_MARKER, type MissingMarker, recordWithoutMarker } from '../outputs/missing-marker.ts';
import { pollDocument } from '../batch/send/index.ts';
import { keyHint, type KeySource } from '../batch/session.ts';

export type GetOptions = {
  baseUrl: string;
  apiKey: string;
  /** Poll documents still processing until they end (or the poll timeout). */
  wait: boolean;
  poll: PollPolicy;
  out: string | undefined;
  format: string | undefined;
  explode: string | undefined;
  keySource?: KeySource | undefined;
  /**
   * A value exactly this text is shown as null (and the record needs review), as a run's records
   * show it; null: the results as the service gave them. Absent: DEFAULT_MISSING_MARKER.
   */
  missingMarker?: MissingMarker | undefined;
  /**
   * --json: an id the service does not give is a record (status error) among the others, for a
   * script; else it is said on stderr, for a person, and counts as failed all the same.
   */
  json?: boolean | undefined;
};

export type GetDeps = ClientDeps & { cwd: string; stdout: Writable; stderr: Writable };

export type GetSummary = { exitCode: number; records: DocumentRecord[] };

/** `extract get <document_id...>`: stored documents as records (to recover results, or collect by id). */
export async function runGet(ids: string[], options: GetOptions, deps: GetDeps): Promise<GetSummary> {
  const target = resolveOutput({ out: options.out, format: options.format, cwd: deps.cwd });
  checkExplode(target, options.explode);
  await prepareOutput(target);
  const client = new ServiceClient({ baseUrl: options.baseUrl, apiKey: options.apiKey }, deps);
  const records: DocumentRecord[] = [];
  const marker = options.missingMarker === undefined ? DEFAULT_MISSING_MARKER : options.missingMarker;
  let pending = 0;
  let failed = 0;
  for (const id of ids) {
    let doc: FetchedDocument;
    try {
      doc = await fetchDocument(client, id, options, deps);
    } catch (err) {
      if (err instanceof ServiceError && err.kind === 'auth')
        throw new ExtractError('auth', `${err.message}: ${keyHint(options.keySource)}`, { cause: err });
      if (!(err instanceof ServiceError)) throw err;
      failed++;
      if (options.json === true) records.push(errorRecord({ file: id, document_id: id, route: 'fetch' }, err.message));
      else deps.stderr.write(`extract: ${inert(`${id}: ${err.message}`)}\n`);
      continue;
    }
    if (doc.status === 'processing') pending++;
    if (doc.status === 'error') failed++;
    records.push(recordWithoutMarker(fetchedRecord(doc, id), marker));
  }
  await writeOutputs(target, records, {
    cwd: deps.cwd,
    explode: options.explode,
    stdout: deps.stdout,
    warn: (m) => deps.stderr.write(`extract: ${m}\n`),
  });
  if (isStreamed(target)) {
    // writeOutputs leaves streamed JSON Lines to the stream writer.
    const writer = createStreamWriter(deps.stdout);
    for (const r of records) await writer.write(r);
  }
  const exitCode = failed > 0 ? EXIT_CODES.failed : pending > 0 ? EXIT_CODES.pending : EXIT_CODES.ok;
  return { exitCode, records };
}

async function fetchDocument(
  client: ServiceClient,
  id: string,
  options: GetOptions,
  deps: GetDeps,
): Promise<FetchedDocument> {
  // One GET at once; with --wait, the pipeline's poll loop until the document ends or the poll timeout.
  const end = await pollDocument(client, id, {
    policy: options.poll,
    firstDelay: 0,
    nextStep: 0,
    ...(!options.wait && { maxPolls: 1 }),
    deps,
  });
  const doc = end.end === 'finished' ? end.doc : end.last;
  // Only a deadline reached before the first answer leaves none (a poll timeout of 0): ask once.
  return doc ?? client.getDocument(id);
}

/** A stored document as a record; one still processing is pending, with how to collect it. */
function fetchedRecord(doc: FetchedDocument, id: string): DocumentRecord {
  const origin = { file: doc.file_name || id, document_id: doc.document_id, route: 'fetch' } as const;
  switch (doc.status) {
    case 'processing':
      return pendingRecord(origin, `still processing: run "extract get --wait ${doc.document_id}"`, doc.page_count);
    case 'completed':
      return completedRecord(origin, doc.page_count, doc.results);
    case 'error':
      return errorRecord(origin, doc.error ?? UNEXPLAINED_ERROR, doc.page_count, doc.results);
  }
}
