import { basename } from 'node:path';
import type { ClientDeps } from '../../client/deps.ts';
import { ServiceError } from '../../client/errors.ts';
import { ServiceClient } from '../../client/service-client.ts';
import { probeAnswer } from '../../cost/attempt.ts';
import { ExtractError } from '../../errors.ts';
import type { Candidate } from '../../journal/identity.ts';
import { keyHint, type KeySource } from '../session.ts';

/**
 * Which of the candidates' documents this key can read: the spec scopes a key to one parser,
 * so a key that reads a parser's document is that parser's (a rotated key, another machine's
 * key). One GET per candidate target; reads cost nothing. A document answered under another
 * name or page count is taken for another service's and not seen: paying again is the lesser
 * harm than taking another parser's results. An answer that settles nothing (no connection,
 * the service's own error) stops the run before anything is sent, since sending could pay twice.
 */
export type ProbedService = { baseUrl: string; apiKey: string; keySource?: KeySource | undefined };

export async function probe(
  service: ProbedService,
  found: readonly Candidate[],
  deps: ClientDeps,
): Promise<{ seen: string[]; unseen: string[] }> {
  const client = new ServiceClient(service, deps);
  const seen: string[] = [];
  const unseen: string[] = [];
  for (const candidate of found) {
    if (await sees(client, candidate, service.keySource)) seen.push(candidate.target);
    else unseen.push(candidate.target);
  }
  return { seen, unseen };
}

async function sees(
  client: ServiceClient,
  { documentId, fact }: Candidate,
  keySource: KeySource | undefined,
): Promise<boolean> {
  try {
    const doc = await client.getDocument(documentId);
    if (doc.file_name !== '' && doc.file_name !== basename(fact.file)) return false;
    const pages = fact.fact === 'completed' || fact.fact === 'submitted' ? fact.page_count : null;
    if (typeof pages === 'number' && doc.page_count !== null && doc.page_count !== pages) return false;
    return true;
  } catch (err) {
    if (err instanceof ServiceError && err.kind === 'no_route')
      // Without a route to read a document, "not found" says nothing about the key: taking it for
      // another parser's would send again, and pay again for, every document the journal holds.
      throw new ExtractError(
        'usage',
        `this API key is not the one the journal's documents were sent with, and this service has no route to read a document (${documentId}), so extract cannot tell whether both keys are one parser's: nothing was sent. ` +
          'With the key the journal knows, runs go on as before; for another parser, name a journal of its own with --state',
      );
    const answer = err instanceof ServiceError ? probeAnswer(err) : 'unsettled';
    if (answer === 'unseen') return false;
    const message = err instanceof Error ? err.message : String(err);
    // The client's message already says the key was rejected (and the service's words): what is
    // left to say is where the key came from and how to replace it.
    if (answer === 'key-rejected') throw new ExtractError('auth', `${message}: ${keyHint(keySource)}`);
    throw new ExtractError(
      'unreachable',
      `could not tell whether this API key belongs to the parser of documents the journal already holds (reading document ${documentId}: ${message}); nothing was sent, so nothing is paid twice: rerun when the service answers`,
    );
  }
}
