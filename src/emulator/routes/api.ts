import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, ExtractRequest, UploadUrlRequest } from '../../contract/index.ts';
import type { KeyRing } from '../auth.ts';
import type { Gateway } from '../gateway.ts';
import type { Idempotency } from '../idempotency.ts';
import { injectedAsyncError } from './faults.ts';
import { HEADER, noteDocument, parseBody } from './http.ts';

/** How many finished documents' bodies the document route keeps encoded (oldest dropped first). */
const FINISHED_CACHE_SIZE = 2000;

/**
 * The encoded bodies of finished documents, by document_id: kept by the document route, read
 * there and by the server's fast path for kept reads (fast-reads.ts). `bytes` is `encoded` as UTF-8.
 */
export type KeptBodies = Map<string, { parserId: string; encoded: string; bytes: Buffer }>;

/** The emulated API under /api/v1 (spec, "Endpoints" 1, 3 and 4): decode, call the gateway, encode. */
export function apiRoutes(input: {
  gateway: Gateway;
  keys: KeyRing;
  idempotency: Idempotency;
  /** false: the header is ignored, as by a service that does not honour it (config `idempotency_key`). */
  honourIdempotencyKey?: boolean;
  maxBodyBytes: number;
  now: () => number;
  /** Shared with the fast path (fast-reads.ts); a map of the route's own without it. */
  kept?: KeptBodies;
}) {
  const { gateway, keys, maxBodyBytes, now } = input;
  const idempotency = input.honourIdempotencyKey === false ? undefined : input.idempotency;
  return async (app: FastifyInstance) => {
    const parserOf = (request: FastifyRequest) =>
      keys.parserFor(request.headers[HEADER.authorization], request.raw.socket);
    const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

    app.post(`${API_PREFIX}/upload-url`, async (request) => {
      const parser = parserOf(request);
      return gateway.issueTicket(parser, parseBody(UploadUrlRequest, request.body), baseUrlOf(request));
    });

    app.post(`${API_PREFIX}/extract`, { bodyLimit: maxBodyBytes }, async (request) => {
      const parser = parserOf(request);
      const body = parseBody(ExtractRequest, request.body);
      const header = request.headers[HEADER.idempotencyKey];
      const held = idempotency !== undefined && typeof header === 'string' ? { idempotency, key: header } : undefined;
      const record = held && ((answer: unknown) => held.idempotency.finish(parser.parser_id, held.key, answer));
      // The key's answer is recorded in the transaction that creates (storage path) or completes
      // (inline) the document: a kill between the two would free the key of a charged document.
      const run = () =>
        body.shape === 'inline'
          ? gateway.extractInline(parser, body.request, record, injectedAsyncError(request))
          : gateway.extractStored(parser, body.request, injectedAsyncError(request), record);
      if (held === undefined) return noteDocument(request, await run());
      const replay = held.idempotency.begin(parser.parser_id, held.key, request.body, now());
      if (replay !== null) return replay;
      try {
        return noteDocument(request, await run());
      } catch (err) {
        held.idempotency.abort(parser.parser_id, held.key);
        throw err;
      }
    });

    // A completed or failed document never changes again (documents.ts moves only a processing
    // one), so its encoded body is kept: polling clients then cost a lookup, not a database read,
    // a JSON.parse and a JSON.stringify. A processing document is read afresh every time. The
    // handler is synchronous (nothing here awaits): no promise per read.
    const finished: KeptBodies = input.kept ?? new Map();
    app.get<{ Params: { document_id: string } }>(`${API_PREFIX}/documents/:document_id`, (request, reply) => {
      const parser = parserOf(request);
      const documentId = request.params.document_id;
      const known = finished.get(documentId);
      // Another parser's document is not in the cache's answer: the gateway says not found.
      let encoded = known?.parserId === parser.parser_id ? known.encoded : undefined;
      if (encoded === undefined) {
        const body = gateway.getDocument(parser, documentId);
        if (body.status === 'processing') {
          void reply.send(noteDocument(request, body));
          return;
        }
        encoded = JSON.stringify(body);
        if (finished.size >= FINISHED_CACHE_SIZE) finished.delete(finished.keys().next().value!);
        finished.set(documentId, { parserId: parser.parser_id, encoded, bytes: Buffer.from(encoded) });
      }
      request.extractDocumentId = documentId;
      void reply.type('application/json; charset=utf-8').send(encoded);
    });
  };
}
