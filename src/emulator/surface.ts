import { join } from 'node:path';
import {
  EMULATOR_PREFIX,
  type AppDocument,
  type AppDocumentDetail,
  type DocumentsPage,
  type DocumentsQuery,
  type ParserConfig,
} from '../contract/index.ts';
import { mediaTypeEssence } from '../mime/detect.ts';
import type { DocumentRow, Documents } from './documents.ts';
import { GatewayError } from './errors.ts';
import type { ResolvedIntegration } from './webhooks/dispatcher.ts';

/** Types the app's document view shows (PDF pages through pdfjs, images as images). */
const VIEWABLE = new Set(['application/pdf', 'image/png', 'image/jpeg']);

export type StoredFile = { path: string; mimeType: string; viewable: boolean };

/** A secret shown as its first characters and a mask: enough to tell two apart, not to use. */
export function mask(secret: string): string {
  return `${secret.slice(0, Math.min(4, Math.floor(secret.length / 4)))}…${secret.length > 16 ? secret.slice(-4) : ''}`;
}

/** A document row as the app lists it: results only once completed. */
function appDocument(d: DocumentRow): AppDocument {
  return {
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
  };
}

/**
 * Whether a browser may show a stored file itself: only types it shows safely (the document view's
 * PDF pages and images); anything else is offered as a download (routes/emulator.ts).
 */
export function viewable(mimeType: string): boolean {
  return VIEWABLE.has(mediaTypeEssence(mimeType));
}

/**
 * What the emulator's own surface (/_emulator/, routes/emulator.ts) shows of its state, for
 * people and for tests of users' pipelines: documents with their grounding and stored file, and
 * parsers and integrations with their secrets masked (a read of a list, by a rebinding page or
 * on a shared screen, never carries a usable key; revealing one is an explicit action).
 */
export class Surface {
  readonly #documents: Documents;
  readonly #integrations: ReadonlyMap<string, ResolvedIntegration>;
  readonly #parsers: readonly ParserConfig[];
  readonly #blobDir: string;

  constructor(input: {
    documents: Documents;
    integrations: ReadonlyMap<string, ResolvedIntegration>;
    parsers: readonly ParserConfig[];
    blobDir: string;
  }) {
    this.#documents = input.documents;
    this.#integrations = input.integrations;
    this.#parsers = input.parsers;
    this.#blobDir = input.blobDir;
  }

  /** Newest first. */
  documentsPage(q: DocumentsQuery): DocumentsPage {
    const { total, documents } = this.#documents.page(q);
    return { total, offset: q.offset, documents: documents.map(appDocument) };
  }

  /** A document with its grounding (completed only), its notes, and where its stored file is served. */
  document(id: string): AppDocumentDetail {
    const doc = this.#known(id);
    return {
      ...appDocument(doc),
      grounding: doc.status === 'completed' ? doc.grounding : null,
      notes: doc.status === 'processing' ? [] : (doc.notes ?? []),
      file_url: `${EMULATOR_PREFIX}/documents/${encodeURIComponent(doc.document_id)}/file`,
    };
  }

  /** A document's stored bytes, for the app's page view: where they are, their type, and whether a browser may show them. */
  storedFile(id: string): StoredFile {
    const doc = this.#known(id);
    return { path: join(this.#blobDir, doc.blob), mimeType: doc.mime_type, viewable: viewable(doc.mime_type) };
  }

  /** The parsers, each key masked. */
  parsers() {
    return this.#parsers.map((p) => ({
      parser_id: p.parser_id,
      parser_name: p.parser_name,
      fields: p.fields,
      api_keys: p.api_keys.map((key) => ({ masked: mask(key) })),
    }));
  }

  /** One key in full (the page's Copy button; the route takes it by POST, so another origin's page cannot). */
  revealKey(parserId: string, index: string): string {
    const key = /^\d+$/.test(index)
      ? this.#parsers.find((p) => p.parser_id === parserId)?.api_keys[Number(index)]
      : undefined;
    if (key === undefined) {
      throw new GatewayError(
        'not_found',
        `no key ${JSON.stringify(index.slice(0, 20))} of parser ${JSON.stringify(parserId.slice(0, 80))}: GET ${EMULATOR_PREFIX}/parsers lists them`,
      );
    }
    return key;
  }

  /** The webhook integrations, a bearer token masked and a password never shown. */
  integrations() {
    return [...this.#integrations.values()].map((i) => ({
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
    }));
  }

  #known(id: string): DocumentRow {
    const doc = this.#documents.get(id);
    if (!doc) throw new GatewayError('not_found', `no document ${JSON.stringify(id.slice(0, 80))}`);
    return doc;
  }
}
