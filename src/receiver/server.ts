import Fastify, { type FastifyError, type FastifyReply } from 'fastify';
import {
  describeZodErrorInline,
  jsonDepthOver,
  MAX_PAYLOAD_DEPTH,
  MISSING_IS_MISSING,
  type ReceiverAccepted,
  type ReceiverErrorBody,
  type ReceiverErrorCode,
  type ReceiverTestAccepted,
  WebhookPayload,
} from '../contract/index.ts';
import { ExtractError } from '../errors.ts';
import { crossOriginProblem, hostProblem } from '../loopback.ts';
import { createAuthenticator } from './auth.ts';
import { openInbox } from './inbox.ts';
import { createLogger } from './log.ts';
import {
  RECEIVER_DEFAULTS,
  type ReceiverDeps,
  type ReceiverOptions,
  type ReceiverStats,
  type RunningReceiver,
} from './options.ts';
import { createSink } from './sink.ts';
import { createWorker, type WorkerCounts } from './worker.ts';
import { errnoCode } from '../errno.ts';

/** Header names the routes read or write, named once. */
const HEADER = {
  authorization: 'authorization',
  contentType: 'content-type',
  allow: 'allow',
  wwwAuthenticate: 'www-authenticate',
  host: 'host',
  origin: 'origin',
  secFetchSite: 'sec-fetch-site',
} as const;
const ACCEPTED_METHODS = ['POST', 'PUT'] as const;
const OTHER_METHODS = ['GET', 'HEAD', 'DELETE', 'PATCH', 'OPTIONS'] as const;
/** A JSON or CSV output is rewritten at most this often: a burst of events is one rewrite, not one each. */
const WHOLE_FILE_SPACING_MS = 250;
/** Other file outputs are fsynced once per pass; spacing passes keeps those fsyncs from crowding the acknowledgements'. */
const FILE_SPACING_MS = 25;

/**
 * `extract listen`: a receiver of document.processed events (spec, "Events"). The reply is
 * sent once the raw event is durably in the inbox and nothing more (spec, "Delivery rules"
 * 2: answer 200 at once, work afterwards); deduplication and outputs follow in the worker.
 */
export async function startReceiver(
  options: ReceiverOptions,
  deps: Partial<ReceiverDeps> = {},
): Promise<RunningReceiver> {
  const { now, stdout, cwd }: ReceiverDeps = {
    now: () => new Date(),
    stdout: process.stdout,
    cwd: process.cwd(),
    ...deps,
  };
  const host = options.host ?? RECEIVER_DEFAULTS.host;
  const path = _normalisePath(options.path ?? RECEIVER_DEFAULTS.path);
  const maxBodyBytes = options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes;
  const logger = createLogger(options.log, options.json ?? false);
  const authenticator = createAuthenticator(options.auth);

  // Output problems (a typo in -o) surface before anything is acknowledged.
  const sink = await createSink({
    out: options.out,
    format: options.format,
    cwd,
    stdout,
    dataDir: options.dataDir,
    warn: (message) => logger({ type: 'error', message }),
  });
  const inbox = openInbox(options.dataDir);
  const stats: ReceiverStats = { received: 0, duplicates: 0, rejected: 0, unauthorized: 0 };
  const counts: WorkerCounts = { new: 0, duplicates: 0 };
  const worker = createWorker({
    inbox,
    sink,
    logger,
    now,
    counts,
    delayMs: options.workerDelayMs ?? 0,
    spacingMs: sink.wholeFile ? WHOLE_FILE_SPACING_MS : sink.toDisk ? FILE_SPACING_MS : 0,
  });

  const app = Fastify({ logger: false, bodyLimit: maxBodyBytes, forceCloseConnections: true, exposeHeadRoutes: false });
  // The raw bytes are what the inbox keeps, so every body is read as a buffer and parsed here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  // Only this machine's senders (src/loopback.ts): no DNS-rebinding Host, no write from another origin's page.
  app.addHook('onRequest', async (request, reply) => {
    const header = (name: string) => {
      const v = request.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const problem =
      hostProblem(header(HEADER.host), host) ??
      crossOriginProblem({
        method: request.method,
        origin: header(HEADER.origin),
        secFetchSite: header(HEADER.secFetchSite),
        host: header(HEADER.host),
      });
    if (problem === null) return;
    stats.rejected++;
    logger({ type: 'forbidden', status: 403, method: request.method, reason: problem });
    return _send(reply, 'forbidden', problem);
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      stats.rejected++;
      logger({ type: 'too_large', status: 413, method: request.method, limit_bytes: maxBodyBytes });
      return _send(reply, 'payload_too_large', `the body is over ${maxBodyBytes} bytes`);
    }
    if (typeof err.statusCode === 'number' && err.statusCode < 500) {
      stats.rejected++;
      return _send(reply, 'invalid_payload', `invalid request: ${err.message}`);
    }
    // Storing failed (disk full, inbox gone): a 5xx makes the sender retry later, which is right.
    logger({ type: 'error', message: `could not store an event: ${err.message}` });
    return _send(reply, 'internal', 'the receiver could not store the event; send it again later');
  });
  app.setNotFoundHandler((request, reply) =>
    _send(
      reply,
      'not_found',
      `no route ${request.method} ${request.url.split('?')[0]}: events are accepted on ${path}`,
    ),
  );

  app.route({
    method: [...OTHER_METHODS],
    url: path,
    handler: (_request, reply) =>
      _send(
        reply.header(HEADER.allow, ACCEPTED_METHODS.join(', ')),
        'method_not_allowed',
        `send events with ${ACCEPTED_METHODS.join(' or ')}`,
      ),
  });

  app.route({
    method: [...ACCEPTED_METHODS],
    url: path,
    // Before the body is read: an unauthenticated sender does not get to upload 5 MiB.
    onRequest: async (request, reply) => {
      const verdict = authenticator.check(request.headers[HEADER.authorization]);
      if (verdict.ok) return;
      stats.unauthorized++;
      logger({ type: 'unauthorized', status: 401, method: request.method, path, reason: verdict.reason });
      if (authenticator.challenge !== undefined) reply.header(HEADER.wwwAuthenticate, authenticator.challenge);
      return _send(reply, 'unauthorized', `unauthorized: ${verdict.reason}`);
    },
    handler: async (request, reply) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const receivedAt = now();
      const verdict = _validate(body);
      if (!verdict.ok) {
        const contentType = request.headers[HEADER.contentType];
        const rejectedId = inbox.reject({
          receivedAt,
          method: request.method,
          contentType,
          reason: verdict.reason,
          body,
        });
        stats.rejected++;
        logger({
          type: 'invalid',
          status: 400,
          method: request.method,
          reason: verdict.reason,
          rejected_id: rejectedId,
        });
        return _send(reply, 'invalid_payload', `not a document.processed event: ${verdict.reason}`);
      }
      if (verdict.test) {
        // An integration's test action: acknowledged and logged, never written as a real document.
        logger({ type: 'test', method: request.method, document_id: verdict.documentId });
        const test: ReceiverTestAccepted = { received: true, test: true, document_id: verdict.documentId };
        return reply.code(200).type('application/json').send(test);
      }
      const seq = inbox.append({ receivedAt, method: request.method, documentId: verdict.documentId, body });
      stats.received++;
      worker.kick();
      const accepted: ReceiverAccepted = { received: true, document_id: verdict.documentId, inbox_seq: seq };
      return reply.code(200).type('application/json').send(accepted);
    },
  });

  try {
    await sink.start(inbox);
    await app.listen({ host, port: options.port ?? RECEIVER_DEFAULTS.port });
  } catch (err) {
    await app.close();
    inbox.close();
    const code = errnoCode(err);
    if (code === 'EADDRINUSE') {
      throw new ExtractError(
        'usage',
        `port ${options.port} is in use: pick another with --port, or --port 0 for a free one`,
        { cause: err },
      );
    }
    if (code === 'EADDRNOTAVAIL') {
      throw new ExtractError('usage', `cannot bind ${host}: use an address of this machine, such as 127.0.0.1`, {
        cause: err,
      });
    }
    throw err;
  }
  // What a previous run acknowledged but did not process.
  worker.kick();

  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    stats: () => ({ ...stats, duplicates: counts.duplicates }),
    drained: () => worker.idle(),
    close() {
      closing ??= (async () => {
        await app.close();
        await worker.stop();
        inbox.close();
        logger({ type: 'summary', ...stats, duplicates: counts.duplicates, new: counts.new });
      })();
      return closing;
    },
  };
}

type Verdict = { ok: true; documentId: string; test: boolean } | { ok: false; reason: string };

/** JSON, then the shared contract's WebhookPayload; the reason names the first few paths that fail. */
function _validate(body: Buffer): Verdict {
  if (body.length === 0) return { ok: false, reason: 'empty body' };
  const text = body.toString('utf8');
  if (jsonDepthOver(text, MAX_PAYLOAD_DEPTH))
    return { ok: false, reason: `nested deeper than ${MAX_PAYLOAD_DEPTH} levels` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = WebhookPayload.safeParse(json, MISSING_IS_MISSING);
  if (parsed.success) return { ok: true, documentId: parsed.data.document_id, test: parsed.data.test === true };
  return { ok: false, reason: describeZodErrorInline(parsed.error, 3) };
}

/** One status a code: a sender's mistake is a 4xx, only a failure to store the event is a 5xx (the sender retries). */
const STATUS_OF: Record<ReceiverErrorCode, number> = {
  unauthorized: 401,
  forbidden: 403,
  invalid_payload: 400,
  payload_too_large: 413,
  method_not_allowed: 405,
  not_found: 404,
  internal: 500,
};

function _send(reply: FastifyReply, code: ReceiverErrorCode, error: string): FastifyReply {
  const body: ReceiverErrorBody = { success: false, error, code };
  return reply.code(STATUS_OF[code]).type('application/json').send(body);
}

function _normalisePath(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.length > 1 && withSlash.endsWith('/') ? withSlash.slice(0, -1) : withSlash;
}
