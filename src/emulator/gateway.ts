import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  API_PREFIX,
  type DocumentBody,
  type EmulatorConfig,
  type ExtractAcceptedResponse,
  type ExtractInlineRequest,
  type ExtractInlineResponse,
  type ExtractStoredRequest,
  type ParserConfig,
  type SourceType,
  type UploadTicket,
  type UploadUrlRequest,
} from '../contract/index.ts';
import { EngineError, type Engine } from '../engine/types.ts';
import { detectMimeType, mediaTypeEssence } from '../mime.ts';
import type { EmulatorDeps } from './clock.ts';
import type { Faults } from './faults.ts';
import { documentBody, type DocumentRow, type Documents } from './documents.ts';
import { ServiceError } from './errors.ts';
import type { Ledger } from './ledger.ts';
import type { Processor } from './processor.ts';
import { transaction, type Store } from './store.ts';
import { uploadUrl, type Signer } from './tickets.ts';
import { sanitiseFileName, type UploadRow, type Uploads } from './uploads.ts';

/**
 * Why a page count cannot be a real document's, or null when it can: at least one page, a
 * whole number, and no more pages than bytes (no page can be written in less than a byte).
 * A PDF's page tree declares its own /Count, so a hostile file can claim -1000000 pages.
 */
export function pageCountProblem(pages: number, size: number): string | null {
  if (!Number.isSafeInteger(pages) || pages < 1) {
    return `the document declares ${pages} pages; a document has at least one: its page tree is damaged, so re-save the file (print to PDF) and submit it again`;
  }
  if (pages > size) {
    return `the document declares ${pages} pages in ${size} bytes, more pages than bytes: its page tree is damaged, so re-save the file (print to PDF) and submit it again`;
  }
  return null;
}

/**
 * The service's rules, one function per operation of the spec. Routes decode HTTP and
 * call these; these throw ServiceError with the exact texts users see.
 */
export type Gateway = ReturnType<typeof createGateway>;

export function createGateway(input: {
  store: Store;
  config: EmulatorConfig;
  engine: Engine;
  documents: Documents;
  uploads: Uploads;
  ledger: Ledger;
  signer: Signer;
  processor: Processor;
  faults: Faults;
  deps: EmulatorDeps;
}) {
  const { store, config, engine, documents, uploads, ledger, signer, processor, faults, deps } = input;

  /**
   * Counts pages before anything is charged; an unreadable document is the client's problem (422),
   * and so is a page count no real document has (a damaged or hostile page tree): it never
   * reaches the ledger.
   */
  const countPages = async (bytes: Uint8Array, mimeType: string) => {
    let pages: number;
    try {
      pages = await engine.countPages(bytes, mimeType);
    } catch (err) {
      if (err instanceof EngineError) throw new ServiceError('unreadable_document', err.message);
      throw err;
    }
    const insane = pageCountProblem(pages, bytes.length);
    if (insane !== null) throw new ServiceError('unreadable_document', insane);
    return pages;
  };

  /** Creates the document and reserves its pages in one transaction: both land, or neither. */
  const accept = (doc: Omit<DocumentRow, 'status' | 'results' | 'error' | 'finished_at'>, also?: () => void) => {
    transaction(store.db, () => {
      documents.insert(doc);
      also?.();
      ledger.reserve(doc, doc.page_count ?? 0, doc.created_at);
    });
    return documents.get(doc.document_id)!;
  };

  /** Operation 1. */
  function issueTicket(parser: ParserConfig, req: UploadUrlRequest, baseUrl: string): UploadTicket {
    const expiresIn = config.upload.expires_in;
    // Rounded up to the next whole second, so an address is never valid for less than expires_in.
    const expires = Math.ceil(deps.now() / 1000) + expiresIn;
    const fileType = mediaTypeEssence(req.file_type);
    const row = uploads.create({ parser_id: parser.parser_id, file_name: req.file_name, file_type: fileType, expires_at: expires });
    const sig = signer.sign(row.storage_path, fileType, expires);
    return { upload_url: uploadUrl(baseUrl, row.storage_path, expires, sig), storage_path: row.storage_path, expires_in: expiresIn };
  }

  /** Operation 2: the signed PUT. */
  async function receiveUpload(req: {
    storagePath: string;
    method: string;
    contentType: string | undefined;
    query: Partial<Record<string, unknown>>;
    /** Whether the request carries an Authorization header: signed-URL storage refuses a second credential. */
    authorized: boolean;
    body: Readable;
  }): Promise<{ size: number; sha256: string }> {
    if (req.authorized) {
      throw new ServiceError(
        'invalid_request',
        'the upload address is signed and takes no Authorization header (signed-URL storage refuses two credentials): send the PUT without it, and never send your API key to storage',
      );
    }
    const row = uploads.get(req.storagePath);
    if (!row) {
      throw new ServiceError('upload_forbidden', 'no upload address was issued for this storage path: request one with POST /api/v1/upload-url');
    }
    signer.verify({ storagePath: row.storage_path, fileType: row.file_type, query: req.query, nowMs: deps.now() });
    if (req.method !== 'PUT') {
      throw new ServiceError('upload_forbidden', `the upload address is signed for PUT only, not ${req.method}`);
    }
    const sent = mediaTypeEssence(req.contentType);
    if (sent !== row.file_type) {
      throw new ServiceError(
        'upload_forbidden',
        `Content-Type "${sent || '(none)'}" does not match the file_type "${row.file_type}" declared for this upload address: send Content-Type: ${row.file_type}`,
      );
    }
    if (row.document_id || uploads.isFrozen(row.storage_path)) {
      throw new ServiceError('conflict', `this storage path was already submitted${row.document_id ? ` as ${row.document_id}` : ''}; its object cannot change now`);
    }
    return uploads.write(row, req.body, deps.now());
  }

  /**
   * Operation 3a: extraction in the request, bounded by inline.timeout_ms. `record` runs in
   * the transaction that completes the document (see extractStored).
   */
  async function extractInline(parser: ParserConfig, req: ExtractInlineRequest, record?: (answer: ExtractInlineResponse) => void): Promise<ExtractInlineResponse> {
    const bytes = Buffer.from(req.file.data, 'base64');
    const doc = await admit(parser, { bytes, fileName: req.file.name, declaredType: req.file.type, source: 'api', route: 'inline' });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), config.inline.timeout_ms);
    });
    const answer = (results: ExtractInlineResponse['results']): ExtractInlineResponse => ({ success: true, parser_id: parser.parser_id, document_id: doc.document_id, results });
    const outcome = await Promise.race([processor.run(doc, undefined, record && ((results) => record(answer(results)))), timeout]).finally(() => clearTimeout(timer));
    if (outcome === 'timeout') {
      processor.abandon(doc.document_id, `inline extraction exceeded ${config.inline.timeout_ms} ms; the credits were refunded`);
      throw new ServiceError(
        'inline_timeout',
        `inline extraction did not finish within ${config.inline.timeout_ms} ms; nothing was charged: submit this document through the upload-and-poll route`,
      );
    }
    if (outcome.status === 'error') {
      const code = outcome.cause === 'unreadable' ? 'unreadable_document' : 'extraction_failed';
      throw new ServiceError(code, `${outcome.error} (document ${doc.document_id}; refunded)`);
    }
    return answer(outcome.results);
  }

  /** Stores the bytes and admits a document that arrived with its bytes (inline, app upload, email, inbound webhook). */
  async function admit(
    parser: ParserConfig,
    input: { bytes: Buffer; fileName: string; declaredType: string | undefined; source: SourceType; route: 'inline' | 'stored' },
  ): Promise<DocumentRow> {
    if (input.bytes.length === 0) throw new ServiceError('unreadable_document', 'the file is empty (0 bytes): check the file and submit it again');
    const mimeType = await detectMimeType(input.bytes, input.fileName, input.declaredType);
    const pages = await countPages(input.bytes, mimeType);
    const documentId = deps.newId('doc');
    const blob = deps.newId('blob');
    writeFileSync(join(store.blobDir, blob), input.bytes, { flush: true });
    return accept({
      document_id: documentId,
      parser_id: parser.parser_id,
      file_name: sanitiseFileName(input.fileName),
      mime_type: mimeType,
      source_type: input.source,
      route: input.route,
      blob,
      size: input.bytes.length,
      sha256: createHash('sha256').update(input.bytes).digest('hex'),
      page_count: pages,
      created_at: deps.now(),
    });
  }

  /**
   * Operation 3b: always asynchronous, even for a tiny file. `record` runs inside the
   * transaction that creates the document, so an Idempotency-Key's answer lands with the
   * document or not at all: a kill between the two would free the key of a charged document,
   * and its resend would then be refused as "already submitted".
   */
  async function extractStored(
    parser: ParserConfig,
    req: ExtractStoredRequest,
    injectedError?: string,
    record?: (answer: ExtractAcceptedResponse) => void,
  ): Promise<ExtractAcceptedResponse> {
    const row = uploads.get(req.storage_path);
    if (!row || row.parser_id !== parser.parser_id) {
      throw new ServiceError('not_found', 'no upload exists at this storage_path for this API key\'s parser: pass storage_path exactly as POST /api/v1/upload-url returned it');
    }
    if (row.document_id) {
      throw new ServiceError('conflict', `this storage_path was already submitted as document ${row.document_id}: poll GET ${API_PREFIX}/documents/${row.document_id}`);
    }
    if (row.uploaded_at === null || row.size === null || row.sha256 === null) {
      throw new ServiceError('upload_missing', 'nothing was uploaded to this storage_path yet: PUT the bytes to upload_url first');
    }
    if (req.file_size !== undefined && req.file_size !== row.size) {
      throw new ServiceError('invalid_request', `file_size ${req.file_size} does not match the ${row.size} bytes uploaded: upload the whole file again`);
    }
    // From here to the row that marks it submitted, a PUT to this path is refused (409).
    const release = uploads.freeze(row.storage_path);
    try {
      return await submitStored(parser, req, { ...row, size: row.size, sha256: row.sha256 }, injectedError, record);
    } finally {
      release();
    }
  }

  async function submitStored(
    parser: ParserConfig,
    req: ExtractStoredRequest,
    row: UploadRow & { size: number; sha256: string },
    injectedError: string | undefined,
    record: ((answer: ExtractAcceptedResponse) => void) | undefined,
  ): Promise<ExtractAcceptedResponse> {
    const bytes = await readFile(join(store.blobDir, row.blob));
    const declared = req.file_type ?? row.file_type;
    const fileName = sanitiseFileName(req.file_name ?? row.file_name);
    const mimeType = await detectMimeType(bytes.subarray(0, 4100), fileName, declared);
    const base = {
      document_id: deps.newId('doc'),
      parser_id: parser.parser_id,
      file_name: fileName,
      mime_type: mimeType,
      source_type: 'api' as const,
      route: 'stored' as const,
      blob: row.blob,
      size: row.size,
      sha256: row.sha256,
      created_at: deps.now(),
    };
    let pages: number;
    try {
      pages = await countPages(bytes, mimeType);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      // Accepted as the spec says, then failed through the document; nothing was reserved.
      transaction(store.db, () => {
        documents.insert({ ...base, page_count: null, status: 'error', error: err.message });
        uploads.markSubmitted(row.storage_path, base.document_id);
        record?.(accepted(base.document_id));
      });
      return accepted(base.document_id);
    }
    const doc = accept({ ...base, page_count: pages }, () => {
      uploads.markSubmitted(row.storage_path, base.document_id);
      record?.(accepted(base.document_id));
    });
    processor.enqueue(doc, injectedError);
    return accepted(doc.document_id);
  }

  const accepted = (documentId: string): ExtractAcceptedResponse => ({
    success: true,
    document_id: documentId,
    status: 'processing',
    poll_url: `${API_PREFIX}/documents/${documentId}`,
  });

  /** Operation 4. Another parser's document is not found, not forbidden: its existence is not disclosed. */
  function getDocument(parser: ParserConfig, documentId: string): DocumentBody {
    const doc = documents.get(documentId);
    if (!doc || doc.parser_id !== parser.parser_id) {
      throw new ServiceError('not_found', `no document ${JSON.stringify(documentId.slice(0, 80))} for this API key's parser`);
    }
    return documentBody(doc);
  }

  /**
   * A document that arrived with its bytes by another route (the application's upload,
   * email, the inbound webhook): admitted like the storage-path shape, extracted in the background.
   */
  async function submitArrived(
    parser: ParserConfig,
    input: { bytes: Buffer; fileName: string; declaredType: string | undefined; source: SourceType },
  ): Promise<ExtractAcceptedResponse> {
    const doc = await admit(parser, { ...input, route: 'stored' });
    // Background extraction whatever the route, so extract-async fault rules apply here too.
    const effect = faults.draw('extract-async');
    processor.enqueue(doc, effect?.type === 'async_error' ? effect.message : undefined);
    return accepted(doc.document_id);
  }

  /** After a restart: background documents resume; inline ones lost their client, so they fail and are refunded. */
  function resume(): void {
    for (const doc of documents.processing()) {
      if (doc.route === 'inline') processor.abandon(doc.document_id, 'the server stopped during this inline extraction; the credits were refunded');
      else processor.enqueue(doc);
    }
  }

  return { issueTicket, receiveUpload, extractInline, extractStored, getDocument, submitArrived, resume };
}
