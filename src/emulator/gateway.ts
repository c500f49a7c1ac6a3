import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type {
  DocumentBody,
  EmulatorConfig,
  ExtractAcceptedResponse,
  ExtractInlineRequest,
  ExtractFailedResponse,
  ExtractInlineResponse,
  ExtractStoredRequest,
  ParserConfig,
  SourceType,
  UploadTicket,
  UploadUrlRequest,
} from '../contract/index.ts';
import { readAt } from '../read-at.ts';
import { detectMimeType, mediaTypeEssence } from '../mime/detect.ts';
import type { EmulatorDeps } from './clock.ts';
import { accepted, documentBody, type DocumentRow, type Documents, type NewDocument } from './documents.ts';
import { GatewayError } from './errors.ts';
import type { Ledger } from './ledger.ts';
import type { PageCounter } from './pages.ts';
import type { Processor } from './processor.ts';
import { blankResults, markMissing, type Profile } from './profile.ts';
import type { Cleanup } from './cleanup.ts';
import { transaction } from '../sqlite.ts';
import type { Store } from './store.ts';
import { uploadUrl, type Signer } from './tickets.ts';
import type { Uploads } from './uploads.ts';
import {
  checkContentType,
  checkMethod,
  checkNotEmpty,
  checkWritable,
  issued,
  refuseAuthorization,
  submittable,
  type UploadedRow,
  type UploadPut,
} from './upload-rules.ts';

/** The first `length` bytes of a file (fewer if it is shorter). */
async function readHead(path: string, length: number): Promise<Uint8Array> {
  const file = await open(path, 'r');
  try {
    return await readAt(file, 0, length);
  } finally {
    await file.close();
  }
}

export type GatewayParts = {
  store: Store;
  config: EmulatorConfig;
  /** The one page counter of every route (pages.ts), with the rehearsal cap. */
  countPages: PageCounter;
  documents: Documents;
  uploads: Uploads;
  ledger: Ledger;
  signer: Signer;
  processor: Processor;
  deps: EmulatorDeps;
  profile: Profile;
  cleanup: Cleanup;
};

/**
 * The service's rules, one method per operation of the spec. Routes decode HTTP and
 * call these; these throw GatewayError with the exact texts users see.
 */
export class Gateway {
  readonly #p: GatewayParts;
  readonly #countPages: PageCounter;

  constructor(parts: GatewayParts) {
    this.#p = parts;
    this.#countPages = parts.countPages;
  }

  /** Operation 1. */
  issueTicket(parser: ParserConfig, req: UploadUrlRequest, baseUrl: string): UploadTicket {
    const { config, deps, uploads, signer } = this.#p;
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
  async receiveUpload(req: UploadPut): Promise<{ size: number; sha256: string }> {
    const { uploads, signer, deps } = this.#p;
    refuseAuthorization(req.authorized);
    const row = issued(uploads.get(req.storagePath));
    signer.verify({ storagePath: row.storage_path, fileType: row.file_type, query: req.query, nowMs: deps.now() });
    checkMethod(req.method);
    checkContentType(req.contentType, row.file_type);
    checkWritable(row, uploads.isFrozen(row.storage_path));
    return uploads.write(row, req.body, deps.now());
  }

  /**
   * Operation 3a: extraction in the request, bounded by the profile's inline time limit. `record`
   * runs in the transaction that completes the document (see extractStored).
   */
  async extractInline(
    parser: ParserConfig,
    req: ExtractInlineRequest,
    injectedError?: string,
    record?: (answer: ExtractInlineResponse) => void,
  ): Promise<ExtractInlineResponse | ExtractFailedResponse> {
    const { inline, missing } = this.#p.profile;
    const limitMs = inline.timeoutMs;
    // One deadline for the whole request, page counting included; when it passes, the engine's
    // worker is stopped (not left reading for nobody).
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new Error(`inline extraction exceeded ${limitMs} ms; the credits were refunded`)),
      limitMs,
    );
    try {
      const bytes = Buffer.from(req.file.data, 'base64');
      let doc: DocumentRow;
      try {
        doc = await this.#admit(
          parser,
          { bytes, fileName: req.file.name, declaredType: req.file.type, source: 'api', route: 'inline' },
          deadline.signal,
        );
      } catch (err) {
        if (deadline.signal.aborted) throw this.#timedOut(limitMs);
        throw err;
      }
      const answer = (results: ExtractInlineResponse['results']): ExtractInlineResponse => ({
        success: true,
        parser_id: parser.parser_id,
        document_id: doc.document_id,
        results: markMissing(results, missing),
      });
      const outcome = await this.#p.processor.run(doc, {
        injectedError,
        onCompleted: record && ((results) => record(answer(results))),
        signal: deadline.signal,
        leaveOnAbort: inline.refundAfterMs !== null,
      });
      if (outcome.status === 'completed') return answer(outcome.results);
      if (deadline.signal.aborted) {
        if (inline.refundAfterMs !== null)
          this.#p.cleanup.refundAt(doc.document_id, this.#p.deps.now() + inline.refundAfterMs);
        throw this.#timedOut(limitMs);
      }
      if (inline.failureAnswered) return this.#failureAnswer(parser, doc, outcome.error);
      const code = outcome.cause === 'unreadable' ? 'unreadable_document' : 'extraction_failed';
      throw new GatewayError(code, `${outcome.error} (document ${doc.document_id}; refunded)`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The profile's answer to an inline request past its time limit. */
  #timedOut(limitMs: number): GatewayError {
    if (this.#p.profile.inline.refundAfterMs !== null)
      return new GatewayError(
        'function_invocation_timeout',
        `the function was stopped after ${limitMs} ms; its reservation stays until the clean-up job refunds it`,
      );
    return new GatewayError(
      'inline_timeout',
      `inline extraction did not finish within ${limitMs} ms; nothing was charged: submit this document through the upload-and-poll route`,
    );
  }

  /**
   * A failed (and refunded) extraction answered 200, as the deployed route does: success false, or,
   * for a short document, success true with every field missing.
   */
  #failureAnswer(parser: ParserConfig, doc: DocumentRow, error: string): ExtractInlineResponse | ExtractFailedResponse {
    const { inline, missing } = this.#p.profile;
    if (missing !== null && (doc.page_count ?? 0) <= inline.blankAnswerMaxPages) {
      return {
        success: true,
        parser_id: parser.parser_id,
        document_id: doc.document_id,
        results: blankResults(parser.fields, missing),
      };
    }
    return { success: false, parser_id: parser.parser_id, document_id: doc.document_id, error };
  }

  /**
   * Operation 3b: always asynchronous, even for a tiny file. `record` runs inside the
   * transaction that creates the document, so an Idempotency-Key's answer lands with the
   * document or not at all: a kill between the two would free the key of a charged document,
   * and its resend would then be refused as "already submitted".
   */
  async extractStored(
    parser: ParserConfig,
    req: ExtractStoredRequest,
    injectedError?: string,
    record?: (answer: ExtractAcceptedResponse) => void,
  ): Promise<ExtractAcceptedResponse> {
    const { uploads, profile } = this.#p;
    if (!profile.offers('extract-stored'))
      throw new GatewayError(
        'invalid_request',
        'this service takes inline files only: send "file" with the bytes in base64 (it has no upload route)',
      );
    const row = submittable(uploads.get(req.storage_path), parser, req);
    // From here to the row that marks it submitted, a PUT to this path is refused (409).
    const release = uploads.freeze(row.storage_path);
    try {
      return await this.#submitStored(parser, req, row, injectedError, record);
    } finally {
      release();
    }
  }

  /** Operation 4. Another parser's document is not found, not forbidden: its existence is not disclosed. */
  getDocument(parser: ParserConfig, documentId: string): DocumentBody {
    const doc = this.#p.documents.get(documentId);
    if (!doc || doc.parser_id !== parser.parser_id) {
      throw new GatewayError(
        'not_found',
        `no document ${JSON.stringify(documentId.slice(0, 80))} for this API key's parser`,
      );
    }
    return documentBody(doc);
  }

  /** After a restart: background documents resume; inline ones lost their client, so they fail and are refunded. */
  resume(): void {
    const { documents, processor, profile, cleanup } = this.#p;
    const refundAfterMs = profile.inline.refundAfterMs;
    for (const doc of documents.processing()) {
      // The deployed platform's clean-up job refunds on its own schedule, whatever stopped the request.
      if (doc.route === 'inline' && refundAfterMs !== null)
        cleanup.refundAt(doc.document_id, doc.created_at + profile.inline.timeoutMs + refundAfterMs);
      else if (doc.route === 'inline')
        processor.abandon(
          doc.document_id,
          'the server stopped during this inline extraction; the credits were refunded',
        );
      else processor.enqueue(doc);
    }
  }

  /** Stores the bytes of an inline request and admits its document (the other arrival routes: arrivals/intake.ts). */
  async #admit(
    parser: ParserConfig,
    input: { bytes: Buffer; fileName: string; declaredType: string | undefined; source: SourceType; route: 'inline' },
    signal?: AbortSignal,
  ): Promise<DocumentRow> {
    const { store, deps } = this.#p;
    checkNotEmpty(input.bytes);
    const mimeType = await detectMimeType(input.bytes, input.fileName, input.declaredType);
    const pages = await this.#countPages(input.bytes, input.bytes.length, mimeType, signal);
    const documentId = deps.newId('doc');
    const blob = deps.newId('blob');
    writeFileSync(join(store.blobDir, blob), input.bytes, { flush: true });
    return this.#accept({
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

  async #submitStored(
    parser: ParserConfig,
    req: ExtractStoredRequest,
    row: UploadedRow,
    injectedError: string | undefined,
    record: ((answer: ExtractAcceptedResponse) => void) | undefined,
  ): Promise<ExtractAcceptedResponse> {
    const { store, deps, documents, uploads, processor } = this.#p;
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
      pages = await this.#countPages({ path: blobPath }, row.size, mimeType);
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
    const doc = this.#accept({ ...base, page_count: pages }, () => {
      uploads.markSubmitted(row.storage_path, base.document_id);
      record?.(accepted(base.document_id));
    });
    processor.enqueue(doc, injectedError);
    return accepted(doc.document_id);
  }

  /** Creates the document and reserves its pages in one transaction: both land, or neither. */
  #accept(doc: NewDocument, also?: () => void): DocumentRow {
    const { store, documents, ledger } = this.#p;
    transaction(store.db, () => {
      documents.insert(doc);
      also?.();
      ledger.reserve(doc, doc.page_count ?? 0, doc.created_at);
    });
    return documents.get(doc.document_id)!;
  }
}
