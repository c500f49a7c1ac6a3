import type { FastifyInstance } from 'fastify';
import type { Gateway } from '../gateway.ts';
import { STORAGE_PREFIX } from '../tickets.ts';
import { HEADER } from './http.ts';

/**
 * The storage side of upload tickets (spec, "Endpoints" 2): the PUT of raw bytes to a
 * signed address, no Authorization header, no size ceiling. The catch-all content-type
 * parser leaves the body unread, so the gateway streams it to disk in constant memory.
 */
export function storageRoutes(gateway: Gateway) {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.all(`${STORAGE_PREFIX}*`, { bodyLimit: Number.MAX_SAFE_INTEGER }, async (request, reply) => {
      const raw = (request.params as { '*': string })['*'];
      const storagePath = raw.split('/').map(safeDecode).join('/');
      const stored = await gateway.receiveUpload({
        storagePath,
        method: request.method,
        contentType: request.headers[HEADER.contentType],
        query: request.query as Record<string, unknown>,
        authorized: request.headers[HEADER.authorization] !== undefined,
        body: request.raw,
      });
      return reply
        .code(200)
        .send({ success: true, storage_path: storagePath, size: stored.size, sha256: stored.sha256 });
    });
  };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
