import { boundedServer, type ConnectionLimits } from '../net/connections.ts';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import {
  isTestEvent,
  jsonDepthOver,
  MAX_PAYLOAD_DEPTH,
  type ReceiverAccepted,
  type ReceiverErrorBody,
  type ReceiverErrorCode,
  type ReceiverTestAccepted,
} from '../contract/index.ts';
import { crossOriginProblem, hostProblem } from '../net/loopback.ts';
import type { Authenticator } from './auth.ts';
import type { GroupAppend } from './group-append.ts';
import type { Inbox } from './inbox.ts';
import type { Logger } from './log.ts';
import type { ReceiverStats } from './options.ts';
import type { Worker } from './worker.ts';
import { eventText } from './event-text.ts';

/**
 * The receiver's HTTP surface: one path takes events (POST or PUT), everything else is a JSON
 * error of the contract's ReceiverErrorBody. The reply to an event is sent once its raw body is
 * durably in the inbox and nothing more (spec, "Delivery rules" 2: answer 200 at once, work
 * afterwards); deduplication and outputs follow in the worker.
 */
export type RoutesContext = {
  /** The path events are accepted on, normalised (leading slash, no trailing one). */
  path: string;
  /** The address bound: a Host naming it is this machine. */
  host: string;
  maxBodyBytes: number;
  /** Connection cap and timeouts (src/net/connections.ts). */
  connections: ConnectionLimits;
  now: () => Date;
  logger: Logger;
  authenticator: Authenticator;
  inbox: Inbox;
  /** Appends to the inbox, grouped per turn of the event loop (group-append.ts). */
  append: GroupAppend;
  worker: Pick<Worker, 'kick'>;
  stats: ReceiverStats;
};

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

/** The receiver's Fastify app, routes installed, not yet listening. */
export function receiverApp(ctx: RoutesContext): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: ctx.maxBodyBytes,
    forceCloseConnections: true,
    exposeHeadRoutes: false,
    serverFactory: boundedServer(ctx.connections, (message) => ctx.logger({ type: 'error', message })),
  });
  // The raw bytes are what the inbox keeps, so every body is read as a buffer and parsed here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  installLoopbackGuard(app, ctx);
  installErrors(app, ctx);
  app.route({
    method: [...OTHER_METHODS],
    url: ctx.path,
    handler: (_request, reply) =>
      send(
        reply.header(HEADER.allow, ACCEPTED_METHODS.join(', ')),
        'method_not_allowed',
        `send events with ${ACCEPTED_METHODS.join(' or ')}`,
      ),
  });
  app.route({
    method: [...ACCEPTED_METHODS],
    url: ctx.path,
    // Before the body is read: an unauthenticated sender does not get to upload 5 MiB.
    onRequest: async (request, reply) => authenticate(ctx, request, reply),
    handler: async (request, reply) => receive(ctx, request, reply),
  });
  return app;
}

/**
 * Only this machine's senders (src/net/loopback.ts): no DNS-rebinding Host, no write from another
 * origin's page. A foreign Host that brings the right credentials is the service through a tunnel
 * or a reverse proxy that keeps the public name (the deployed sender never retries the 403): a
 * rebinding page cannot know the secret, so with credentials required, and no Origin, they are
 * the proof.
 */
function installLoopbackGuard(app: FastifyInstance, ctx: RoutesContext): void {
  app.addHook('onRequest', async (request, reply) => {
    const header = (name: string) => {
      const v = request.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    // No browser page is vouched for: the service's deliveries carry no Origin.
    const vouched = () =>
      header(HEADER.origin) === undefined &&
      ctx.authenticator.required &&
      ctx.authenticator.check(header(HEADER.authorization)).ok;
    const foreignHost = hostProblem(header(HEADER.host), ctx.host);
    const problem =
      (foreignHost !== null && !vouched() ? foreignHost : null) ??
      crossOriginProblem({
        method: request.method,
        origin: header(HEADER.origin),
        secFetchSite: header(HEADER.secFetchSite),
        host: header(HEADER.host),
      });
    if (problem === null) return;
    ctx.stats.rejected++;
    ctx.logger({ type: 'forbidden', status: 403, method: request.method, reason: problem });
    return send(reply, 'forbidden', problem);
  });
}

function installErrors(app: FastifyInstance, ctx: RoutesContext): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      ctx.stats.rejected++;
      ctx.logger({ type: 'too_large', status: 413, method: request.method, limit_bytes: ctx.maxBodyBytes });
      return send(reply, 'payload_too_large', `the body is over ${ctx.maxBodyBytes} bytes`);
    }
    if (typeof err.statusCode === 'number' && err.statusCode < 500) {
      ctx.stats.rejected++;
      return send(reply, 'invalid_payload', `invalid request: ${err.message}`);
    }
    // Storing failed (disk full, inbox gone): a 5xx makes the sender retry later, which is right.
    ctx.logger({ type: 'error', message: `could not store an event: ${err.message}` });
    return send(reply, 'internal', 'the receiver could not store the event; send it again later');
  });
  app.setNotFoundHandler((request, reply) =>
    send(
      reply,
      'not_found',
      `no route ${request.method} ${request.url.split('?')[0]}: events are accepted on ${ctx.path}`,
    ),
  );
}

async function authenticate(ctx: RoutesContext, request: FastifyRequest, reply: FastifyReply) {
  const verdict = ctx.authenticator.check(request.headers[HEADER.authorization]);
  if (verdict.ok) return;
  ctx.stats.unauthorized++;
  ctx.logger({ type: 'unauthorized', status: 401, method: request.method, path: ctx.path, reason: verdict.reason });
  if (ctx.authenticator.challenge !== undefined) reply.header(HEADER.wwwAuthenticate, ctx.authenticator.challenge);
  return send(reply, 'unauthorized', `unauthorized: ${verdict.reason}`);
}

/**
 * An event: refused (and its body kept aside) only when the sender can fix it, a body that is not
 * a JSON object; acknowledged once it is on disk otherwise. The deployed service never retries
 * after a 4xx, so a JSON object of a shape listen does not expect is acknowledged and kept in the
 * inbox like any event: the worker finds it is not a document.processed it can write, logs why,
 * and leaves it there (docs/listen.md, "What is answered 4xx").
 */
async function receive(ctx: RoutesContext, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const receivedAt = ctx.now();
  const verdict = parseEvent(body);
  if (!verdict.ok) {
    const contentType = request.headers[HEADER.contentType];
    const rejectedId = ctx.inbox.reject({
      receivedAt,
      method: request.method,
      contentType,
      reason: verdict.reason,
      body,
    });
    ctx.stats.rejected++;
    ctx.logger({
      type: 'invalid',
      status: 400,
      method: request.method,
      reason: verdict.reason,
      rejected_id: rejectedId,
    });
    return send(reply, 'invalid_payload', `not a document.processed event: ${verdict.reason}`);
  }
  const documentId = typeof verdict.event.document_id === 'string' ? verdict.event.document_id : '';
  if (isTestEvent(verdict.event)) {
    // An integration's test action: acknowledged and logged, never stored, so it claims no document_id.
    ctx.stats.tests++;
    ctx.logger({ type: 'test', method: request.method, document_id: documentId });
    const test: ReceiverTestAccepted = { received: true, test: true, document_id: documentId };
    return reply.code(200).type('application/json').send(test);
  }
  const seq = await ctx.append({ receivedAt, method: request.method, documentId, body });
  ctx.stats.received++;
  ctx.worker.kick();
  const accepted: ReceiverAccepted = { received: true, document_id: documentId, inbox_seq: seq };
  return reply.code(200).type('application/json').send(accepted);
}

type Verdict = { ok: true; event: Record<string, unknown> } | { ok: false; reason: string };

/** A JSON object, no deeper than the contract allows; whether it is a document.processed is the worker's to say. */
function parseEvent(body: Buffer): Verdict {
  if (body.length === 0) return { ok: false, reason: 'empty body' };
  const text = eventText(body);
  if (jsonDepthOver(text, MAX_PAYLOAD_DEPTH))
    return { ok: false, reason: `nested deeper than ${MAX_PAYLOAD_DEPTH} levels` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!_isObject(json))
    return {
      ok: false,
      reason: `a JSON ${json === null ? 'null' : Array.isArray(json) ? 'array' : typeof json}, not an object`,
    };
  return { ok: true, event: json };
}

function _isObject(json: unknown): json is Record<string, unknown> {
  return typeof json === 'object' && json !== null && !Array.isArray(json);
}

function send(reply: FastifyReply, code: ReceiverErrorCode, error: string): FastifyReply {
  const body: ReceiverErrorBody = { success: false, error, code };
  return reply.code(STATUS_OF[code]).type('application/json').send(body);
}
