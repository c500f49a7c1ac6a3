import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, ExtractRequest, UploadUrlRequest } from '../../contract/index.ts';
import type { KeyRing } from '../auth.ts';
import { FinishedBodies } from '../finished-bodies.ts';
import type { Gateway } from '../gateway.ts';
import type { Idempotency } from '../idempotency.ts';
import type { Profile } from '../profile.ts';
import { injectedAsyncError } from './faults.ts';
import { HEADER, noteDocument, parseBody } from './http.ts';

/** The emulated API under /api/v1 (spec, "Endpoints" 1, 3 and 4): decode, call the gateway, encode. */
export function apiRoutes(input: {
  gateway: Gateway;
  keys: KeyRing;
  idempotency: Idempotency;
  /** Which operations the service has, and the inline body limit. */
  profile: Profile;
  now: () => number;
  /** Shared with the fast path (fast-reads.ts); the route's own without it. */
  finished?: FinishedBodies;
}) {
  const { gateway, keys, idempotency, profile, now } = input;
  const finished = input.finished ?? new FinishedBodies();
  return async (app: FastifyInstance) => {
    const parserOf = (request: FastifyRequest) =>
      keys.parserFor(request.headers[HEADER.authorization], request.raw.socket);
    const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

    // A profile without an operation has no route for it: the not-found handler answers.
    if (profile.offers('upload-url')) {
      app.post(`${API_PREFIX}/upload-url`, async (request) => {
        const parser = parserOf(request);
        return gateway.issueTicket(parser, parseBody(UploadUrlRequest, request.body), baseUrlOf(request));
      });
    }

    app.post(`${API_PREFIX}/extract`, { bodyLimit: profile.inline.maxBodyBytes }, async (request) => {
      const parser = parserOf(request);
      const body = parseBody(ExtractRequest, request.body);
      const header = request.headers[HEADER.idempotencyKey];
      const key = typeof header === 'string' ? header : undefined;
      const once = await idempotency.once(
        { parserId: parser.parser_id, key, body: request.body, nowMs: now() },
        async (record?: (answer: { document_id: string }) => void) =>
          noteDocument(
            request,
            body.shape === 'inline'
              ? await gateway.extractInline(parser, body.request, injectedAsyncError(request), record)
              : await gateway.extractStored(parser, body.request, injectedAsyncError(request), record),
          ),
      );
      return 'ran' in once ? once.ran : once.replayed;
    });

    if (!profile.offers('documents')) return;
    // The handler is synchronous (nothing here awaits): no promise per read.
    app.get<{ Params: { document_id: string } }>(`${API_PREFIX}/documents/:document_id`, (request, reply) => {
      const parser = parserOf(request);
      const documentId = request.params.document_id;
      const read = finished.read(parser.parser_id, documentId, () => gateway.getDocument(parser, documentId));
      if ('processing' in read) {
        void reply.send(noteDocument(request, read.processing));
        return;
      }
      request.extractDocumentId = documentId;
      void reply.type('application/json; charset=utf-8').send(read.encoded);
    });
  };
}
