import type { FastifyInstance } from 'fastify';
import { DeliveryState, EMULATOR_PREFIX, RecoverRequest, TopUpRequest, type ParserConfig } from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import type { Ledger } from '../ledger.ts';
import type { Webhooks } from '../webhooks/index.ts';
import { parseBody } from './http.ts';
import { z } from 'zod';

const DeliveryQuery = z.object({
  integration: z.string().optional(),
  document_id: z.string().optional(),
  outcome: DeliveryState.optional(),
  limit: z.coerce.number().int().positive().max(5000).optional(),
});

/** A secret shown as its first characters and a mask: enough to tell two apart, not to use. */
const mask = (secret: string) => `${secret.slice(0, Math.min(4, Math.floor(secret.length / 4)))}…`;

/**
 * The emulator's own surface under /_emulator/, outside the emulated API: for people
 * and for tests of users' pipelines. It needs no API key (the server binds loopback).
 */
export function emulatorRoutes(input: { ledger: Ledger; webhooks: Webhooks; parsers: readonly ParserConfig[]; deps: EmulatorDeps }) {
  const { ledger, webhooks, parsers, deps } = input;
  return async (app: FastifyInstance) => {
    app.get(`${EMULATOR_PREFIX}/health`, async () => ({ ok: true }));
    app.get(`${EMULATOR_PREFIX}/ledger`, async () => ledger.body());
    app.post(`${EMULATOR_PREFIX}/credits`, async (request) => {
      const { pages } = parseBody(TopUpRequest, request.body);
      ledger.topUp(pages, deps.now());
      return { balance: ledger.balance() };
    });

    app.get(`${EMULATOR_PREFIX}/parsers`, async () => ({
      parsers: parsers.map((p) => ({ parser_id: p.parser_id, parser_name: p.parser_name, fields: p.fields, api_keys: p.api_keys.map(mask) })),
    }));
    app.get(`${EMULATOR_PREFIX}/integrations`, async () => ({
      integrations: [...webhooks.integrations.values()].map((i) => ({
        id: i.id,
        parser_id: i.parser_id,
        url: i.url,
        method: i.method,
        auth: i.auth.type === 'bearer' ? { type: 'bearer', token: mask(i.auth.token) } : i.auth.type === 'basic' ? { type: 'basic', username: i.auth.username, password: '…' } : { type: 'none' },
      })),
    }));
    app.post<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/integrations/:id/test`, async (request) => webhooks.test(request.params.id));

    app.get(`${EMULATOR_PREFIX}/deliveries`, async (request) => {
      const q = parseBody(DeliveryQuery, request.query);
      return { deliveries: webhooks.outbox.list({ integration: q.integration, document_id: q.document_id, outcome: q.outcome }, q.limit) };
    });
    app.post<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/deliveries/:id/resend`, async (request) => webhooks.resend(request.params.id));
    app.post(`${EMULATOR_PREFIX}/deliveries/recover`, async (request) => {
      const { since } = parseBody(RecoverRequest, request.body);
      return { requeued: webhooks.recover(Date.parse(since)) };
    });
  };
}
