import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StartHttpServer } from './http-server.ts';

/**
 * A stand-in of the service as it is deployed (its public source), where it differs from the
 * interface: the inline extract is the only API route; upload-url and documents/{id} are the
 * framework's 404 HTML page; the answer has no page_count; a body over the platform's limit is a
 * 413 text/plain FUNCTION_PAYLOAD_TOO_LARGE; a request past the function's time limit a 504
 * text/plain FUNCTION_INVOCATION_TIMEOUT (stopped, refunded later); a failed extraction is HTTP
 * 200 `success: false` with its document_id (refunded); Idempotency-Key is ignored; errors are
 * `{"error": "..."}`. Under `/www` it answers as the `www.` host does: a 308 to the apex.
 *
 * Behaviour by file name: `slow` in it times out; `bad` in it fails (`success: false`) the first
 * `failTimes` times its content is sent; `lost` in it is charged and its connection dropped.
 */
export type DeployedStandIn = {
  url: string;
  /** POST extract requests that reached the function, per content (sha256 of the file's bytes). */
  posts: Map<string, number>;
  /** Requests per path (`POST /api/v1/upload-url`...). */
  requests: Map<string, number>;
  /** Documents made and kept (charged): success true. */
  charged: () => number;
};

export const PAYLOAD_LIMIT = 4.5 * 1000 * 1000;

const NOT_FOUND_PAGE =
  '<!DOCTYPE html><html><head><meta charSet="utf-8"/><title>404: This page could not be found.</title></head>' +
  '<body><div><h1>404</h1><div><h2>This page could not be found.</h2></div></div></body></html>';

export async function deployedStandIn(
  httpServer: StartHttpServer,
  options: { failTimes?: number; onExtract?: (fileName: string) => void } = {},
): Promise<DeployedStandIn> {
  const posts = new Map<string, number>();
  const requests = new Map<string, number>();
  let made = 0;
  let charged = 0;
  const failTimes = options.failTimes ?? 1;
  const server = await httpServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= PAYLOAD_LIMIT) chunks.push(c);
    });
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const line = `${req.method} ${path}`;
      requests.set(line, (requests.get(line) ?? 0) + 1);
      if (path.startsWith('/www/') || path === '/www') {
        const apex = `http://127.0.0.1:${server.port}${path.slice('/www'.length)}`;
        res.writeHead(308, { location: apex, 'content-type': 'text/plain' }).end('Redirecting...');
        return;
      }
      if (!(req.method === 'POST' && path === '/api/v1/extract')) {
        res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(NOT_FOUND_PAGE);
        return;
      }
      if (!/^Bearer ext_/.test(req.headers.authorization ?? '')) {
        json(res, 401, { error: 'Missing or invalid API key. Use Authorization: Bearer <key>' });
        return;
      }
      if (size > PAYLOAD_LIMIT) {
        res
          .writeHead(413, { 'content-type': 'text/plain; charset=utf-8' })
          .end('Request Entity Too Large\n\nFUNCTION_PAYLOAD_TOO_LARGE\n');
        return;
      }
      let body: { file?: { data?: string; name?: string } };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        json(res, 400, { error: 'Invalid JSON body' });
        return;
      }
      const file = body.file;
      if (file?.data === undefined || file.name === undefined) {
        json(res, 400, { error: 'No file provided' });
        return;
      }
      const sha = createHash('sha256').update(Buffer.from(file.data, 'base64')).digest('hex');
      const sent = (posts.get(sha) ?? 0) + 1;
      posts.set(sha, sent);
      options.onExtract?.(file.name);
      const id = `doc_${++made}`;
      if (file.name.includes('lost')) {
        // The function ran (and charged); the connection dropped before its answer.
        charged++;
        req.socket.destroy();
        return;
      }
      if (file.name.includes('slow')) {
        res
          .writeHead(504, { 'content-type': 'text/plain; charset=utf-8' })
          .end('An error occurred with your deployment\n\nFUNCTION_INVOCATION_TIMEOUT\n');
        return;
      }
      if (file.name.includes('bad') && sent <= failTimes) {
        json(res, 200, { success: false, document_id: id, error: 'Extraction failed. Credits have been refunded.' });
        return;
      }
      charged++;
      json(res, 200, { success: true, parser_id: 'par_1', document_id: id, results: { invoice_number: 'INV-1' } });
    });
  });
  return { url: server.url, posts, requests, charged: () => charged };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
