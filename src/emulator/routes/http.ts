import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { API_PREFIX, describeZodErrorInline, type ErrorBody } from '../../contract/index.ts';
import { errnoCode, isDiskFull } from '../../errno.ts';
import { crossOriginProblem, hostProblem } from '../../net/loopback.ts';
import { STORAGE_PREFIX } from '../tickets.ts';
import { GatewayError, PLATFORM_ANSWERS, STATUS_OF, type GatewayErrorCode } from '../errors.ts';
import type { Profile } from '../profile.ts';

/** Header and parameter names the routes read, named once. */
export const HEADER = {
  authorization: 'authorization',
  contentType: 'content-type',
  idempotencyKey: 'idempotency-key',
  host: 'host',
  origin: 'origin',
  secFetchSite: 'sec-fetch-site',
} as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** The document this request created or read, for its request log line (see noteDocument). */
    extractDocumentId: string | undefined;
  }
}

/**
 * Gives every request the slot noteDocument fills: a property set up with the request object,
 * not a WeakMap entry per request (which the garbage collector then has to sweep).
 */
export function installDocumentNotes(app: FastifyInstance): void {
  app.decorateRequest('extractDocumentId', undefined);
}

/** Names the document a request created or read, for its request log line. */
export function noteDocument<T extends { document_id: string }>(request: FastifyRequest, result: T): T {
  request.extractDocumentId = result.document_id;
  return result;
}

export const documentOf = (request: FastifyRequest) => request.extractDocumentId;

/** An error's answer: the emulator's ErrorBody, or with `bare` the deployed application's `{ error }` alone. */
export function sendError(reply: FastifyReply, code: GatewayErrorCode, message: string, bare = false): FastifyReply {
  const platform = PLATFORM_ANSWERS[code];
  if (platform) {
    return reply
      .code(STATUS_OF[code])
      .header(PLATFORM_ERROR_HEADER, platform.name)
      .type('text/plain; charset=utf-8')
      .send(`${platform.title}\n\n${platform.name}\n`);
  }
  const body: ErrorBody | { error: string } = bare ? { error: message } : { success: false, error: message, code };
  return reply.code(STATUS_OF[code]).type('application/json').send(body);
}

/** Parses a body with a contract schema; a mismatch is a 400 that names the paths. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new GatewayError('invalid_request', `invalid request body: ${describeZodErrorInline(parsed.error, 5)}`);
}

/** Fastify's own errors (body limits, bad JSON, media types) mapped onto the service's codes. */
const FASTIFY_CODES: Record<string, GatewayErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  // @fastify/multipart: a file part over the route's fileSize limit, too many parts or files.
  FST_REQ_FILE_TOO_LARGE: 'payload_too_large',
  FST_FILES_LIMIT: 'payload_too_large',
  FST_PARTS_LIMIT: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
};

/**
 * Every error leaves as a JSON ErrorBody (on the deployed profile's API, `{ error }` alone; its
 * platform's answers as text). A client's mistake is never a 5xx: only a failure of the emulator
 * itself is, and its body says so without internals.
 */
export function installErrorHandling(app: FastifyInstance, log: (line: string) => void, profile: Profile): void {
  app.setErrorHandler((err: FastifyError | GatewayError | Error, request, reply) => {
    const onApi = request.url.startsWith(API_PREFIX_SLASH);
    const send = (code: GatewayErrorCode, message: string) =>
      sendError(reply, code, message, profile.bareErrors && onApi);
    if (err instanceof GatewayError) return send(err.code, err.message);
    if (isDiskFull(err)) {
      log(`disk full: ${err.message}`);
      return send(
        'insufficient_storage',
        'the disk under the data directory is full; nothing was stored and nothing charged: free some space (or move --data-dir) and send the request again',
      );
    }
    const code = errnoCode(err);
    const fastifyCode = code === undefined ? undefined : FASTIFY_CODES[code];
    // The deployed platform refuses an API request's body before its function sees it.
    if (fastifyCode === 'payload_too_large' && profile.platformAnswers && onApi)
      return send('function_payload_too_large', '');
    if (fastifyCode) return send(fastifyCode, requestErrorText(fastifyCode, err.message));
    if (
      err instanceof SyntaxError ||
      ('statusCode' in err && typeof err.statusCode === 'number' && err.statusCode < 500)
    ) {
      return send('invalid_request', `invalid request: ${err.message}`);
    }
    log(`internal error: ${err.stack ?? err.message}`);
    return send(
      'extraction_failed',
      'the emulator failed while handling this request; it is a bug in extract serve, please report it',
    );
  });
  app.setNotFoundHandler((request, reply) =>
    profile.platformAnswers
      ? reply.code(404).type('text/html; charset=utf-8').send(NOT_FOUND_PAGE)
      : sendError(
          reply,
          'not_found',
          `no route ${request.method} ${request.url.split('?')[0]}: see the README for the API under /api/v1`,
        ),
  );
}

/**
 * The loopback surface serves only this machine's pages (src/net/loopback.ts): every request's Host
 * must name this machine (DNS rebinding), and a write to anything but the emulated API and its
 * signed storage, which take credentials a page cannot send, must not come from another origin's
 * page. JSON routes take JSON only: text/plain, which a page may send without asking, is 415.
 */
export function installLoopbackGuard(app: FastifyInstance, boundHost: string): void {
  app.removeContentTypeParser('text/plain');
  const hostProblemOf = rememberedHostProblems(boundHost);
  // A callback hook, not an async one: it runs before every request, the polled reads included.
  app.addHook('onRequest', (request, reply, done) => {
    const host = firstHeader(request.headers[HEADER.host]);
    const hostIssue = hostProblemOf(host);
    if (hostIssue !== null) return void sendError(reply, 'forbidden', hostIssue);
    const path = request.url;
    if (path.startsWith(API_PREFIX_SLASH) || path.startsWith(STORAGE_PREFIX)) return done();
    const originIssue = crossOriginProblem({
      method: request.method,
      origin: firstHeader(request.headers[HEADER.origin]),
      secFetchSite: firstHeader(request.headers[HEADER.secFetchSite]),
      host,
    });
    if (originIssue !== null) return void sendError(reply, 'forbidden', originIssue);
    done();
  });
}

/**
 * The deployed service's web framework answers a path it has no route for with its own 404 page,
 * HTML, whatever the client asked for (upload-url and documents/{id} among them).
 */
const NOT_FOUND_PAGE =
  '<!DOCTYPE html><html><head><meta charSet="utf-8"/><title>404: This page could not be found.</title></head><body><div><h1>404</h1><h2>This page could not be found.</h2></div></body></html>';

/** The header in which the deployed platform names its own errors beside the text. */
const PLATFORM_ERROR_HEADER = 'x-vercel-error';

/**
 * The deployed service answers its `www.` name with a permanent redirect to the apex, for every
 * path and method (308 keeps the method and body). Runs after the loopback guard, which allows
 * `www.localhost`.
 */
export function installWwwRedirect(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const host = firstHeader(request.headers[HEADER.host]);
    if (host === undefined || !host.toLowerCase().startsWith(WWW)) return done();
    void reply
      .code(308)
      .header('location', `${request.protocol}://${host.slice(WWW.length)}${request.url}`)
      .send();
  });
}
const WWW = 'www.';

const API_PREFIX_SLASH = `${API_PREFIX}/`;
/** How many distinct Host values the guard remembers its answer for (any more and it starts over). */
const REMEMBERED_HOSTS = 64;

export const firstHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * hostProblem, remembered per Host value: a machine's clients send a handful of distinct values,
 * and the answer depends on nothing else, so the rule's parsing runs once per value rather than
 * once per request. Bounded, so a client sending endless distinct Hosts costs memory of 64.
 */
export function rememberedHostProblems(boundHost: string): (host: string | undefined) => string | null {
  const known = new Map<string, string | null>();
  return (host) => {
    if (host === undefined) return hostProblem(host, boundHost);
    let problem = known.get(host);
    if (problem === undefined) {
      problem = hostProblem(host, boundHost);
      if (known.size >= REMEMBERED_HOSTS) known.clear();
      known.set(host, problem);
    }
    return problem;
  };
}

/** Errors Fastify raises before routing (a URL that does not decode, a bad header): JSON 400s too. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void sendError(reply, 'invalid_request', `invalid request: ${error.message}`);
}

function requestErrorText(code: GatewayErrorCode, raw: string): string {
  switch (code) {
    case 'payload_too_large':
      return 'the request body is over the inline limit: send large files through the upload-and-poll route (POST /api/v1/upload-url)';
    case 'unsupported_media_type':
      return 'send JSON bodies with Content-Type: application/json';
    default:
      return `invalid request body: ${raw}`;
  }
}
