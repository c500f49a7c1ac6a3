import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import {
  DeliveriesQuery,
  DocumentsQuery,
  EMULATOR_PREFIX,
  RecoverRequest,
  TopUpRequest,
  type AppDocument,
  type AppDocumentDetail,
  type ParserConfig,
} from '../../contract/index.ts';
import type { DocumentRow, Documents } from '../documents.ts';
import { GatewayError } from '../errors.ts';
import type { EmulatorDeps } from '../clock.ts';
import type { Ledger } from '../ledger.ts';
import type { Webhooks } from '../webhooks/index.ts';
import { parseBody } from './http.ts';

const appDocument = (d: DocumentRow): AppDocument => ({
  document_id: d.document_id,
  parser_id: d.parser_id,
  status: d.status,
  file_name: d.file_name,
  mime_type: d.mime_type,
  source_type: d.source_type,
  page_count: d.page_count,
  results: d.status === 'completed' ? d.results : null,
  error: d.error,
  created_at: new Date(d.created_at).toISOString(),
  finished_at: d.finished_at === null ? null : new Date(d.finished_at).toISOString(),
});

/** Types the app's document view shows (PDF pages through pdfjs, images as images). */
const VIEWABLE = new Set(['application/pdf', 'image/png', 'image/jpeg']);

/** A secret shown as its first characters and a mask: enough to tell two apart, not to use. */
const mask = (secret: string) =>
  `${secret.slice(0, Math.min(4, Math.floor(secret.length / 4)))}…${secret.length > 16 ? secret.slice(-4) : ''}`;

/**
 * The emulator's own surface under /_emulator/, outside the emulated API: for people
 * and for tests of users' pipelines. It needs no API key (the server binds loopback).
 */
export function emulatorRoutes(input: {
  ledger: Ledger;
  documents: Documents;
  webhooks: Webhooks;
  parsers: readonly ParserConfig[];
  deps: EmulatorDeps;
  blobDir: string;
}) {
  const { ledger, documents, webhooks, parsers, deps, blobDir } = input;
  return async (app: FastifyInstance) => {
    app.get(`${EMULATOR_PREFIX}/health`, async () => ({ ok: true }));
    app.get(`${EMULATOR_PREFIX}/ledger`, async () => ledger.body());
    app.post(`${EMULATOR_PREFIX}/credits`, async (request) => {
      const { pages } = parseBody(TopUpRequest, request.body);
      ledger.topUp(pages, deps.now());
      return { balance: ledger.balance() };
    });

    app.get(`${EMULATOR_PREFIX}/documents`, async (request) => {
      const q = parseBody(DocumentsQuery, request.query);
      const { total, documents: rows } = documents.page(q);
      return { total, offset: q.offset, documents: rows.map(appDocument) };
    });
    app.get<{ Params: { id: string } }>(
      `${EMULATOR_PREFIX}/documents/:id`,
      async (request): Promise<AppDocumentDetail> => {
        const doc = documents.get(request.params.id);
        if (!doc) throw new GatewayError('not_found', `no document ${JSON.stringify(request.params.id.slice(0, 80))}`);
        return {
          ...appDocument(doc),
          grounding: doc.status === 'completed' ? doc.grounding : null,
          notes: doc.status === 'processing' ? [] : (doc.notes ?? []),
          file_url: `${EMULATOR_PREFIX}/documents/${encodeURIComponent(doc.document_id)}/file`,
        };
      },
    );
    // The stored bytes, for the app's page view. Only types a browser shows safely are served
    // inline; anything else is an attachment. The sandbox keeps any active content inert.
    app.get<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/documents/:id/file`, async (request, reply) => {
      const doc = documents.get(request.params.id);
      if (!doc) throw new GatewayError('not_found', `no document ${JSON.stringify(request.params.id.slice(0, 80))}`);
      const inline = VIEWABLE.has(doc.mime_type.split(';')[0]?.trim().toLowerCase() ?? '');
      reply.headers({
        'content-type': inline ? doc.mime_type : 'application/octet-stream',
        'content-disposition': inline ? 'inline' : 'attachment',
        'content-security-policy': "sandbox; default-src 'none'",
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
      return reply.send(createReadStream(join(blobDir, doc.blob)));
    });

    app.get(`${EMULATOR_PREFIX}/parsers`, async () => ({
      // Masked only: a read of this list (a rebinding page, a screen share) never carries a usable key.
      parsers: parsers.map((p) => ({
        parser_id: p.parser_id,
        parser_name: p.parser_name,
        fields: p.fields,
        api_keys: p.api_keys.map((key) => ({ masked: mask(key) })),
      })),
    }));
    // The explicit action that reveals one key (the page's Copy button): a POST, so another origin's page cannot make it.
    app.post<{ Params: { parser_id: string; index: string } }>(
      `${EMULATOR_PREFIX}/parsers/:parser_id/keys/:index/reveal`,
      async (request) => {
        const parser = parsers.find((p) => p.parser_id === request.params.parser_id);
        const key = parser?.api_keys[Number(request.params.index)];
        if (!parser || !/^\d+$/.test(request.params.index) || key === undefined) {
          throw new GatewayError(
            'not_found',
            `no key ${JSON.stringify(request.params.index.slice(0, 20))} of parser ${JSON.stringify(request.params.parser_id.slice(0, 80))}: GET ${EMULATOR_PREFIX}/parsers lists them`,
          );
        }
        return { key };
      },
    );
    app.get(`${EMULATOR_PREFIX}/integrations`, async () => ({
      integrations: [...webhooks.integrations.values()].map((i) => ({
        id: i.id,
        parser_id: i.parser_id,
        url: i.url,
        method: i.method,
        auth:
          i.auth.type === 'bearer'
            ? { type: 'bearer', token: mask(i.auth.token) }
            : i.auth.type === 'basic'
              ? { type: 'basic', username: i.auth.username, password: '…' }
              : { type: 'none' },
      })),
    }));
    app.post<{ Params: { id: string } }>(`${EMULATOR_PREFIX}/integrations/:id/test`, async (request) =>
      webhooks.test(request.params.id),
    );

    app.get(`${EMULATOR_PREFIX}/deliveries`, async (request) => {
      const q = parseBody(DeliveriesQuery, request.query);
      return {
        deliveries: webhooks.outbox.list(
          { integration: q.integration, document_id: q.document_id, outcome: q.outcome },
          q.limit,
        ),
      };
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
