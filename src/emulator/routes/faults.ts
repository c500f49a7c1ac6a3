import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import {
  API_PREFIX,
  EMULATOR_PREFIX,
  FAULT_VOCABULARY,
  FaultRuleInput,
  type FaultEffect,
  type FaultOperation,
} from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import { GatewayError } from '../errors.ts';
import { latencyOf, type Faults } from '../faults.ts';
import { STORAGE_PREFIX } from '../tickets.ts';
import type { KeyRing } from '../auth.ts';
import { HEADER, parseBody, sendError } from './http.ts';

/**
 * Applies injected faults and forced outcomes to the emulated API over HTTP. The rules
 * and the draws live in faults.ts; this file only knows how to make HTTP misbehave.
 *
 * Forced outcomes (Prism's Prefer header is the model), for deterministic tests:
 *   Prefer: code=402            -> 402 out of credits, nothing charged (any API operation)
 *   Prefer: code=503            -> 503 on an inline extract, nothing charged
 *   Prefer: outcome=error       -> a storage-path extract whose document ends in error (refunded)
 *   Prefer: code=500            -> an inline extract reserved, failed, refunded: 500 (the spec's "refunded" path)
 * Only for a request whose key authenticates; without one the route's 401 stands.
 */
export const PREFER = 'prefer';

const afterEffects = new WeakMap<FastifyRequest, FaultEffect>();
const asyncErrors = new WeakMap<FastifyRequest, string>();

/** The error a forced or injected async failure leaves on the document, if this request carries one. */
export const injectedAsyncError = (request: FastifyRequest) => asyncErrors.get(request);

/** The fault operation a route serves, from its URL; 'extract' is told apart per request by its body. */
function operationOfRoute(url: string): FaultOperation | 'extract' | null {
  if (url === `${API_PREFIX}/upload-url`) return 'upload-url';
  if (url.startsWith(STORAGE_PREFIX)) return 'upload';
  if (url === `${API_PREFIX}/documents/:document_id`) return 'documents';
  if (url === `${API_PREFIX}/extract`) return 'extract';
  return null;
}

function operationOf(route: FaultOperation | 'extract', request: FastifyRequest): FaultOperation {
  if (route !== 'extract') return route;
  const body = request.body;
  return typeof body === 'object' && body !== null && 'file' in body ? 'extract-inline' : 'extract-async';
}

const NO_PREFERENCES: ReadonlyMap<string, string> = new Map();

function preferences(request: FastifyRequest): ReadonlyMap<string, string> {
  const raw = request.headers[PREFER];
  if (raw === undefined) return NO_PREFERENCES;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  return new Map(
    text
      .split(/[,;]/)
      .map((p) => p.trim().split('='))
      .filter((kv): kv is [string, string] => kv.length === 2)
      .map(([k, v]) => [k.trim().toLowerCase(), v.trim().toLowerCase()]),
  );
}

function authenticates(keys: KeyRing, request: FastifyRequest): boolean {
  try {
    keys.parserFor(request.headers[HEADER.authorization], request.raw.socket);
    return true;
  } catch {
    return false;
  }
}

function drop(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.hijack();
  request.raw.socket.destroy();
  return reply;
}

/**
 * Adds the fault hooks to the routes of the emulated API only, as each is declared (so it must
 * run before the routes are registered): the application and the /_emulator/ surface pay
 * nothing, and a request of the API looks its operation up in no table. The hooks take
 * callbacks rather than returning promises: they run on every read of a polled document.
 */
export function installFaults(app: FastifyInstance, faults: Faults, deps: EmulatorDeps, keys: KeyRing): void {
  app.addHook('onRoute', (route) => {
    const operation = operationOfRoute(route.url ?? '');
    if (operation === null) return;
    route.preHandler = [...hookList(route.preHandler), preHandler(operation)];
    route.onSend = [...hookList(route.onSend), afterEffect];
  });

  const preHandler =
    (route: FaultOperation | 'extract'): preHandlerHookHandler =>
    (request, reply, done) => {
      const operation = operationOf(route, request);
      const refused = applyPreferences(operation, request, reply);
      if (refused) return;
      const effect = faults.draw(operation);
      if (effect === null) return done();
      switch (effect.type) {
        case 'status':
          if (effect.status === 429) reply.header('retry-after', String(effect.retry_after));
          void reply.code(effect.status).send({
            success: false,
            error: `injected fault: ${effect.status} on ${operation}`,
            code: 'injected_fault',
          });
          return;
        case 'latency':
          deps.sleep(latencyOf(effect)).then(() => done(), done);
          return;
        case 'reset':
          if (effect.when === 'before') {
            drop(request, reply);
            return;
          }
          afterEffects.set(request, effect);
          return done();
        case 'truncate':
          afterEffects.set(request, effect);
          return done();
        case 'stall':
          reply.hijack();
          setTimeout(() => request.raw.socket.destroy(), effect.ms).unref();
          return;
        case 'async_error':
          if (operation === 'extract-async') asyncErrors.set(request, effect.message);
          return done();
        default:
          return done(); // webhook effects belong to the dispatcher
      }
    };

  /**
   * The Prefer header's forced outcomes; true when it answered the request. Honoured only for a
   * request that authenticates, as the service would first check the key: without one, the
   * route answers 401 whatever the header asks. Without the header, nothing is looked up.
   */
  function applyPreferences(operation: FaultOperation, request: FastifyRequest, reply: FastifyReply): boolean {
    if (request.headers[PREFER] === undefined) return false;
    if (operation !== 'upload' && !authenticates(keys, request)) return false;
    const prefer = preferences(request);
    if (prefer.get('code') === '402') {
      sendError(reply, 'insufficient_credits', 'out of credits (forced by the Prefer header); nothing was charged');
      return true;
    }
    if (prefer.get('code') === '503' && operation === 'extract-inline') {
      sendError(
        reply,
        'inline_timeout',
        'inline extraction timed out (forced by the Prefer header); nothing was charged: use the upload-and-poll route',
      );
      return true;
    }
    if (prefer.get('outcome') === 'error' && operation === 'extract-async')
      asyncErrors.set(request, 'forced error (Prefer: outcome=error)');
    // The spec's "500: refunded": reserved, then failed, then refunded, all in the request.
    if (prefer.get('code') === '500' && operation === 'extract-inline')
      asyncErrors.set(request, 'extraction failed (forced by Prefer: code=500)');
    return false;
  }
}

/** A route's hooks of one kind as a list (a route may declare none, one, or several). */
function hookList<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}

/** reset after the answer, or truncate it: applied as the answer leaves. */
const afterEffect: onSendHookHandler = (request, reply, payload, done) => {
  const effect = afterEffects.get(request);
  if (!effect) return done(null, payload);
  if (effect.type === 'reset') {
    drop(request, reply);
    return done(null, payload);
  }
  // truncate: a full Content-Length promise, half the bytes, then the connection closes.
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload ?? '');
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(reply.statusCode, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
  });
  raw.write(text.slice(0, Math.floor(text.length / 2)), () => setTimeout(() => request.raw.socket.destroy(), 20));
  return done(null, payload);
};

/** The run-time surface: list, add, remove and clear fault rules. */
export function faultRoutes(faults: Faults) {
  return async (app: FastifyInstance) => {
    app.get(`${EMULATOR_PREFIX}/faults`, async () => ({ rules: faults.list() }));
    // The app's form and labels come from here, so the page keeps no copy of the contract's vocabulary.
    app.get(`${EMULATOR_PREFIX}/faults/vocabulary`, async () => FAULT_VOCABULARY);
    app.post(`${EMULATOR_PREFIX}/faults`, async (request) => faults.add(parseBody(FaultRuleInput, request.body)));
    app.delete(`${EMULATOR_PREFIX}/faults`, async () => {
      faults.clear();
      return { rules: [] };
    });
    app.delete<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/faults/:id`, async (request) => {
      if (!faults.remove(request.params.id))
        throw new GatewayError('not_found', `no fault rule ${JSON.stringify(request.params.id.slice(0, 40))}`);
      return { rules: faults.list() };
    });
  };
}
