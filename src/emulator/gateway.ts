import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
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
import type { Engine } from '../engine/types.ts';
import { detectMimeType, mediaTypeEssence } from '../mime/detect.ts';
import type { EmulatorDeps } from './clock.ts';
import { documentBody, type DocumentRow, type Documents } from './documents.ts';
import { GatewayError } from './errors.ts';
import type { Ledger } from './ledger.ts';
import { createPageCounter } from './pages.ts';
import type { Processor } from './processor.ts';
import { transaction } from '../sqlite.ts';
import type { Store } from './store.ts';
import { uploadUrl, type Signer } from './tickets.ts';
import type { UploadRow, Uploads } from './uploads.ts';

/** The first `length` bytes of a file (fewer if it is shorter). */
async function readHead(path: string, length: number): Promise<Uint8Array> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await file.read(buffer, 0, length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

/**
 * The service's rules, one function per operation of the spec. Routes decode HTTP and
 * call these; these throw GatewayError with the exact texts users see.
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
  deps: EmulatorDeps;
}) {
  const { store, config, engine, documents, uploads, ledger, signer, processor, deps } = input;

  const countPages = createPageCounter(engine);

  /** Creates the document and reserves its pages in one transaction: both land, or neither. */
  const accept = (
    doc: Omit<DocumentRow, 'status' | 'results' | 'grounding' | 'notes' | 'error' | 'finished_at'>,
    also?: () => void,
  ) => {
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
    const row = uploads.create({
      parser_id: parser.parser_id,
      file_name: req.file_name,
      file_type: fileType,
      expires_at: expires,
    });
    const sig = signer.sign(row.storage_path, fileType, expires);
    return {
      upload_url: uploadUrl(baseUrl, row.storage_path, expires, sig),
      storage_path: row.storage_path,
      expires_in: expiresIn,
    };
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
      throw new GatewayError(
        'invalid_request',
        'the upload address is signed and takes no Authorization header (signed-URL storage refuses two credentials): send the PUT without it, and never send your API key to storage',
      );
    }
    const row = uploads.get(req.storagePath);
    if (!row) {
      throw new GatewayError(
        'upload_forbidden',
        'no upload address was issued for this storage path: request one with POST /api/v1/upload-url',
      );
    }
    signer.verify({ storagePath: row.storage_path, fileType: row.file_type, query: req.query, nowMs: deps.now() });
    if (req.method !== 'PUT') {
      throw new GatewayError('upload_forbidden', `the upload address is signed for PUT only, not ${req.method}`);
    }
    const sent = mediaTypeEssence(req.contentType);
    if (sent !== row.file_type) {
      throw new GatewayError(
        'upload_forbidden',
        `Content-Type "${sent || '(none)'}" does not match the file_type "${row.file_type}" declared for this upload address: send Content-Type: ${row.file_type}`,
      );
    }
    if (row.document_id || uploads.isFrozen(row.storage_path)) {
      throw new GatewayError(
        'conflict',
        `this storage path was already submitted${row.document_id ? ` as ${row.document_id}` : ''}; its object cannot change now`,
      );
    }
    return uploads.write(row, req.body, deps.now());
  }

  /**
   * Operation 3a: extraction in the request, bounded by inline.timeout_ms. `record` runs in
   * the transaction that completes the document (see extractStored).
   */
  async function extractInline(
    parser: ParserConfig,
    req: ExtractInlineRequest,
    record?: (answer: ExtractInlineResponse) => void,
    injectedError?: string,
  ): Promise<ExtractInlineResponse> {
    const limitMs = config.inline.timeout_ms;
    // One deadline for the whole request, page counting included; when it passes, the engine's
    // worker is stopped (not left running for nobody) and the reservation, if any, refunded.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new Error(`inline extraction exceeded ${limitMs} ms; the credits were refunded`)),
      limitMs,
    );
    const timedOut = () =>
      new GatewayError(
        'inline_timeout',
        `inline extraction did not finish within ${limitMs} ms; nothing was charged: submit this document through the upload-and-poll route`,
      );
    try {
      const bytes = Buffer.from(req.file.data, 'base64');
      let doc: DocumentRow;
      try {
        doc = await admit(
          parser,
          { bytes, fileName: req.file.name, declaredType: req.file.type, source: 'api', route: 'inline' },
          deadline.signal,
        );
      } catch (err) {
        if (deadline.signal.aborted) throw timedOut();
        throw err;
      }
      const answer = (results: ExtractInlineResponse['results']): ExtractInlineResponse => ({
        success: true,
        parser_id: parser.parser_id,
        document_id: doc.document_id,
        results,
      });
      const outcome = await processor.run(
        doc,
        injectedError,
        record && ((results) => record(answer(results))),
        deadline.signal,
      );
      if (outcome.status === 'completed') return answer(outcome.results);
      if (deadline.signal.aborted) throw timedOut();
      const code = outcome.cause === 'unreadable' ? 'unreadable_document' : 'extraction_failed';
      throw new GatewayError(code, `${outcome.error} (document ${doc.document_id}; refunded)`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stores the bytes of an inline request and admits its document (the other arrival routes: arrivals/intake.ts). */
  async function admit(
    parser: ParserConfig,
    input: { bytes: Buffer; fileName: string; declaredType: string | undefined; source: SourceType; route: 'inline' },
    signal?: AbortSignal,
  ): Promise<DocumentRow> {
    if (input.bytes.length === 0)
      throw new GatewayError('unreadable_document', 'the file is empty (0 bytes): check the file and submit it again');
    const mimeType = await detectMimeType(input.bytes, input.fileName, input.declaredType);
    const pages = await countPages(input.bytes, input.bytes.length, mimeType, signal);
    const documentId = deps.newId('doc');
    const blob = deps.newId('blob');
    writeFileSync(join(store.blobDir, blob), input.bytes, { flush: true });
    return accept({
      document_id: documentId,
      parser_id: parser.parser_id,
      // Exactly as submitted (spec: "Original file name"); only storage paths are sanitised.
      file_name: input.fileName,
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
      throw new GatewayError(
        'not_found',
        "no upload exists at this storage_path for this API key's parser: pass storage_path exactly as POST /api/v1/upload-url returned it",
      );
    }
    if (row.document_id) {
      throw new GatewayError(
        'conflict',
        `this storage_path was already submitted as document ${row.document_id}: poll GET ${API_PREFIX}/documents/${row.document_id}`,
      );
    }
    if (row.uploaded_at === null || row.size === null || row.sha256 === null) {
      throw new GatewayError(
        'upload_missing',
        'nothing was uploaded to this storage_path yet: PUT the bytes to upload_url first',
      );
    }
    if (req.file_size !== undefined && req.file_size !== row.size) {
      throw new GatewayError(
        'invalid_request',
        `file_size ${req.file_size} does not match the ${row.size} bytes uploaded: upload the whole file again`,
      );
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
    const blobPath = join(store.blobDir, row.blob);
    const declared = req.file_type ?? row.file_type;
    const fileName = req.file_name ?? row.file_name;
    // Only the head is read here: the engine's worker reads the file itself, and refuses one too large for it.
    const mimeType = await detectMimeType(await readHead(blobPath, 4100), fileName, declared);
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
      pages = await countPages({ path: blobPath }, row.size, mimeType);
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
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
      throw new GatewayError(
        'not_found',
        `no document ${JSON.stringify(documentId.slice(0, 80))} for this API key's parser`,
      );
    }
    return documentBody(doc);
  }

  /** After a restart: background documents resume; inline ones lost their client, so they fail and are refunded. */
  function resume(): void {
    for (const doc of documents.processing()) {
      if (doc.route === 'inline')
        processor.abandon(
          doc.document_id,
          'the server stopped during this inline extraction; the credits were refunded',
        );
      else processor.enqueue(doc);
    }
  }

  return { issueTicket, receiveUpload, extractInline, extractStored, getDocument, resume };
}
