import type { FastifyInstance, FastifyRequest } from 'fastify';
import { API_PREFIX, ExtractRequest, UploadUrlRequest } from '../../contract/index.ts';
import type { KeyRing } from '../auth.ts';
import type { Gateway } from '../gateway.ts';
import { HEADER, noteDocument, parseBody } from './http.ts';

/** The emulated API under /api/v1 (spec, "Endpoints" 1, 3 and 4): decode, call the gateway, encode. */
export function apiRoutes(gateway: Gateway, keys: KeyRing, maxBodyBytes: number) {
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
      const result = body.shape === 'inline' ? await gateway.extractInline(parser, body.request) : await gateway.extractStored(parser, body.request);
      return noteDocument(request, result);
    });

    app.get<{ Params: { document_id: string } }>(`${API_PREFIX}/documents/:document_id`, async (request) => {
      const parser = parserOf(request);
      return noteDocument(request, gateway.getDocument(parser, request.params.document_id));
    });
  };
}
