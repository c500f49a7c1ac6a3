import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, ExtractRequest, UploadUrlRequest } from '../../contract/index.ts';
import type { KeyRing } from '../auth.ts';
import type { Gateway } from '../gateway.ts';
import type { Idempotency } from '../idempotency.ts';
import { injectedAsyncError } from './faults.ts';
import { HEADER, noteDocument, parseBody } from './http.ts';

/** How many finished documents' bodies the document route keeps encoded (oldest dropped first). */
const FINISHED_CACHE_SIZE = 2000;

/** The emulated API under /api/v1 (spec, "Endpoints" 1, 3 and 4): decode, call the gateway, encode. */
export function apiRoutes(input: {
  gateway: Gateway;
  keys: KeyRing;
  idempotency: Idempotency;
  maxBodyBytes: number;
  now: () => number;
}) {
  const { gateway, keys, idempotency, maxBodyBytes, now } = input;
  return async (app: FastifyInstance) => {
    const parserOf = (request: FastifyRequest) => keys.parserFor(request.headers[HEADER.authorization]);
    const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

    app.post(`${API_PREFIX}/upload-url`, async (request) => {
      const parser = parserOf(request);
      return gateway.issueTicket(parser, parseBody(UploadUrlRequest, request.body), baseUrlOf(request));
    });

    app.post(`${API_PREFIX}/extract`, { bodyLimit: maxBodyBytes }, async (request) => {
      const parser = parserOf(request);
      const body = parseBody(ExtractRequest, request.body);
      const key = request.headers[HEADER.idempotencyKey];
      const record =
        typeof key === 'string' ? (answer: unknown) => idempotency.finish(parser.parser_id, key, answer) : undefined;
      // The key's answer is recorded in the transaction that creates (storage path) or completes
      // (inline) the document: a kill between the two would free the key of a charged document.
      const run = () =>
        body.shape === 'inline'
          ? gateway.extractInline(parser, body.request, record, injectedAsyncError(request))
          : gateway.extractStored(parser, body.request, injectedAsyncError(request), record);
      if (typeof key !== 'string') return noteDocument(request, await run());
      const replay = idempotency.begin(parser.parser_id, key, request.body, now());
      if (replay !== null) return replay;
      try {
        return noteDocument(request, await run());
      } catch (err) {
        idempotency.abort(parser.parser_id, key);
        throw err;
      }
    });

    // A completed or failed document never changes again, so its encoded body is kept: polling
    // clients then cost a lookup, not a database read, a JSON.parse and a JSON.stringify.
    const finished = new Map<string, string>();
    app.get<{ Params: { document_id: string } }>(`${API_PREFIX}/documents/:document_id`, async (request, reply) => {
      const parser = parserOf(request);
      const cacheKey = `${parser.parser_id}/${request.params.document_id}`;
      let encoded = finished.get(cacheKey);
      if (encoded === undefined) {
        const body = noteDocument(request, gateway.getDocument(parser, request.params.document_id));
        if (body.status === 'processing') return body;
        encoded = JSON.stringify(body);
        if (finished.size >= FINISHED_CACHE_SIZE) finished.delete(finished.keys().next().value!);
        finished.set(cacheKey, encoded);
      }
      noteDocument(request, { document_id: request.params.document_id });
      return reply.type('application/json; charset=utf-8').send(encoded);
    });
  };
}
