import { createReadStream } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import {
  DeliveriesQuery,
  DocumentsQuery,
  EMULATOR_PREFIX,
  RecoverRequest,
  TopUpRequest,
} from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import type { Ledger } from '../ledger.ts';
import type { StoredFile, Surface } from '../surface.ts';
import type { Webhooks } from '../webhooks/index.ts';
import { parseBody } from './http.ts';

/**
 * How a stored file is served: a viewable one inline as its type, anything else as an attachment;
 * the sandbox keeps any active content inert, and nosniff stops a browser guessing otherwise.
 */
function fileHeaders(file: StoredFile): Record<string, string> {
  return {
    'content-type': file.viewable ? file.mimeType : 'application/octet-stream',
    'content-disposition': file.viewable ? 'inline' : 'attachment',
    'content-security-policy': "sandbox; default-src 'none'",
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

/**
 * The emulator's own surface under /_emulator/, outside the emulated API: for people
 * and for tests of users' pipelines. It needs no API key (the server binds loopback).
 * What it shows, and what it masks, is surface.ts's.
 */
export function emulatorRoutes(input: { ledger: Ledger; surface: Surface; webhooks: Webhooks; deps: EmulatorDeps }) {
  const { ledger, surface, webhooks, deps } = input;
  return async (app: FastifyInstance) => {
    app.get(`${EMULATOR_PREFIX}/health`, async () => ({ ok: true }));
    app.get(`${EMULATOR_PREFIX}/ledger`, async () => ledger.body());
    app.post(`${EMULATOR_PREFIX}/credits`, async (request) => {
      const { pages } = parseBody(TopUpRequest, request.body);
      ledger.topUp(pages, deps.now());
      return { balance: ledger.balance() };
    });

    app.get(`${EMULATOR_PREFIX}/documents`, async (request) =>
      surface.documentsPage(parseBody(DocumentsQuery, request.query)),
    );
    app.get<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/documents/:id`, async (request) =>
      surface.document(request.params.id),
    );
    app.get<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/documents/:id/file`, async (request, reply) => {
      const file = surface.storedFile(request.params.id);
      reply.headers(fileHeaders(file));
      return reply.send(createReadStream(file.path));
    });

    app.get(`${EMULATOR_PREFIX}/parsers`, async () => ({ parsers: surface.parsers() }));
    app.post<{ Params: { parser_id: string; index: string } }>(
      `${EMULATOR_PREFIX}/parsers/:parser_id/keys/:index/reveal`,
      async (request) => ({ key: surface.revealKey(request.params.parser_id, request.params.index) }),
    );
    app.get(`${EMULATOR_PREFIX}/integrations`, async () => ({ integrations: surface.integrations() }));
    app.post<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/integrations/:id/test`, async (request) =>
      webhooks.test(request.params.id),
    );

    app.get(`${EMULATOR_PREFIX}/deliveries`, async (request) => {
      const { limit, ...filter } = parseBody(DeliveriesQuery, request.query);
      return { deliveries: webhooks.outbox.list(filter, limit) };
    });
    app.post<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/deliveries/:id/resend`, async (request) =>
      webhooks.resend(request.params.id),
    );
    app.post(`${EMULATOR_PREFIX}/deliveries/recover`, async (request) => {
      const { since } = parseBody(RecoverRequest, request.body);
      return { requeued: webhooks.recover(Date.parse(since)) };
    });
  };
}
