import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

function operationOf(request: FastifyRequest): FaultOperation | null {
  const url = request.routeOptions.url ?? '';
  if (url === `${API_PREFIX}/upload-url`) return 'upload-url';
  if (url.startsWith(STORAGE_PREFIX)) return 'upload';
  if (url === `${API_PREFIX}/documents/:document_id`) return 'documents';
  if (url === `${API_PREFIX}/extract`) {
    const body = request.body;
    return typeof body === 'object' && body !== null && 'file' in body ? 'extract-inline' : 'extract-async';
  }
  return null;
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

function authenticates(keys: KeyRing, authorization: string | undefined): boolean {
  try {
    keys.parserFor(authorization);
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

export function installFaults(app: FastifyInstance, faults: Faults, deps: EmulatorDeps, keys: KeyRing): void {
  app.addHook('preHandler', async (request, reply) => {
    const operation = operationOf(request);
    if (operation === null) return;
    // Prefer is honoured only for a request that authenticates, as the service would first check
    // the key: without one, the route answers 401 whatever the header asks.
    const prefer =
      operation === 'upload' || authenticates(keys, request.headers[HEADER.authorization])
        ? preferences(request)
        : NO_PREFERENCES;
    if (prefer.get('code') === '402') {
      return sendError(
        reply,
        'insufficient_credits',
        'out of credits (forced by the Prefer header); nothing was charged',
      );
    }
    if (prefer.get('code') === '503' && operation === 'extract-inline') {
      return sendError(
        reply,
        'inline_timeout',
        'inline extraction timed out (forced by the Prefer header); nothing was charged: use the upload-and-poll route',
      );
    }
    if (prefer.get('outcome') === 'error' && operation === 'extract-async')
      asyncErrors.set(request, 'forced error (Prefer: outcome=error)');
    // The spec's "500: refunded": reserved, then failed, then refunded, all in the request.
    if (prefer.get('code') === '500' && operation === 'extract-inline')
      asyncErrors.set(request, 'extraction failed (forced by Prefer: code=500)');

    const effect = faults.draw(operation);
    if (effect === null) return;
    switch (effect.type) {
      case 'status':
        if (effect.status === 429) reply.header('retry-after', String(effect.retry_after));
        return reply
          .code(effect.status)
          .send({ success: false, error: `injected fault: ${effect.status} on ${operation}`, code: 'injected_fault' });
      case 'latency':
        await deps.sleep(latencyOf(effect));
        return;
      case 'reset':
        if (effect.when === 'before') return drop(request, reply);
        afterEffects.set(request, effect);
        return;
      case 'truncate':
        afterEffects.set(request, effect);
        return;
      case 'stall':
        reply.hijack();
        setTimeout(() => request.raw.socket.destroy(), effect.ms).unref();
        return reply;
      case 'async_error':
        if (operation === 'extract-async') asyncErrors.set(request, effect.message);
        return;
      default:
        return; // webhook effects belong to the dispatcher
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const effect = afterEffects.get(request);
    if (!effect) return payload;
    if (effect.type === 'reset') {
      drop(request, reply);
      return payload;
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
    return payload;
  });
}

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
