import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, ExtractRequest, UploadUrlRequest } from '../../contract/index.ts';
import type { KeyRing } from '../auth.ts';
import type { Gateway } from '../gateway.ts';
import type { Idempotency } from '../idempotency.ts';
import { injectedAsyncError } from './faults.ts';
import { HEADER, noteDocument, parseBody } from './http.ts';

/** The emulated API under /api/v1 (spec, "Endpoints" 1, 3 and 4): decode, call the gateway, encode. */
export function apiRoutes(input: { gateway: Gateway; keys: KeyRing; idempotency: Idempotency; maxBodyBytes: number; now: () => number }) {
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
      const run = () => (body.shape === 'inline' ? gateway.extractInline(parser, body.request) : gateway.extractStored(parser, body.request, injectedAsyncError(request)));
      const key = request.headers[HEADER.idempotencyKey];
      if (typeof key !== 'string') return noteDocument(request, await run());
      const replay = idempotency.begin(parser.parser_id, key, request.body, now());
      if (replay !== null) return replay;
      try {
        const result = await run();
        idempotency.finish(parser.parser_id, key, result);
        return noteDocument(request, result);
      } catch (err) {
        idempotency.abort(parser.parser_id, key);
        throw err;
      }
    });

    app.get<{ Params: { document_id: string } }>(`${API_PREFIX}/documents/:document_id`, async (request) => {
      const parser = parserOf(request);
      return noteDocument(request, gateway.getDocument(parser, request.params.document_id));
    });
  };
}
