import { link, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  EMULATOR_PREFIX,
  type ExtractAcceptedResponse,
  type ParserConfig,
  type SourceType,
} from '../../contract/index.ts';
import { detectMimeType } from '../../mime/detect.ts';
import type { EmulatorDeps } from '../clock.ts';
import { accepted, type Documents } from '../documents.ts';
import { GatewayError } from '../errors.ts';
import type { Faults } from '../faults.ts';
import type { Ledger } from '../ledger.ts';
import type { PageCounter } from '../pages.ts';
import type { Processor } from '../processor.ts';
import type { StagedFile } from '../staging.ts';
import { transaction } from '../../sqlite.ts';
import type { Store } from '../store.ts';

/**
 * Documents that arrive with their bytes by another route than the API (the application's upload,
 * the inbound webhook, email): a request or a message is accepted whole or refused whole. Every
 * file is counted first; then one transaction creates every document and reserves every page, so
 * out of credits charges nothing and the sender's retry cannot pay twice. Extraction runs in the
 * background, as for the storage-path shape.
 */
/** Files larger than this go through the API's upload-and-poll route instead. */
export const MAX_ARRIVAL_FILE_BYTES = 100 * 1024 * 1024;
/** Files in one form (the application's upload, the inbound webhook). */
export const MAX_ARRIVAL_FILES = 20;

/** A file over MAX_ARRIVAL_FILE_BYTES: the request is refused whole. */
export function arrivalTooLarge(fileName: string): GatewayError {
  return new GatewayError(
    'payload_too_large',
    `${fileName} is over ${MAX_ARRIVAL_FILE_BYTES} bytes: send it through the API's upload-and-poll route; nothing from this request was accepted`,
  );
}

export type Arrival = {
  parser: ParserConfig;
  file: StagedFile;
  fileName: string;
  declaredType: string | undefined;
  source: SourceType;
};
export type Skipped = { fileName: string; reason: string };
type Counted = Arrival & { mimeType: string; pages: number };
type Admitted = Counted & { blob: string; documentId: string };

export type IntakeParts = {
  parsers: ReadonlyMap<string, ParserConfig>;
  store: Store;
  documents: Documents;
  ledger: Ledger;
  processor: Processor;
  faults: Faults;
  countPages: PageCounter;
  deps: EmulatorDeps;
};

/** An error of one file, for a request refused whole: it names the file, and says nothing was taken. */
function refusedWhole(err: GatewayError, fileName: string): GatewayError {
  return new GatewayError(err.code, `${fileName}: ${err.message}; nothing from this request was accepted`);
}

export class Intake {
  readonly #p: IntakeParts;

  constructor(parts: IntakeParts) {
    this.#p = parts;
  }

  /** The parser documents arrive for (the application's upload names it), or not found. */
  parser(parserId: string): ParserConfig {
    const parser = this.#p.parsers.get(parserId);
    if (!parser)
      throw new GatewayError(
        'not_found',
        `no parser ${JSON.stringify(parserId.slice(0, 80))}: GET ${EMULATOR_PREFIX}/parsers lists them`,
      );
    return parser;
  }

  /**
   * Admits every arrival or none. An unreadable file refuses the whole request (422 naming it),
   * unless `skipUnreadable` (email: a signature logo is no reason to bounce the invoice), in which
   * case it is left out and reported. The staged files are the caller's to remove.
   */
  async submit(
    arrivals: Arrival[],
    options: { skipUnreadable?: boolean } = {},
  ): Promise<{ accepted: ExtractAcceptedResponse[]; skipped: Skipped[] }> {
    const { counted, skipped } = await this.#count(arrivals, options.skipUnreadable ?? false);
    const admitted = await this.#admit(counted);
    return { accepted: admitted.map((a) => this.#start(a)), skipped };
  }

  /** Every file's type and pages, before anything is stored; the same staged file sent to two parsers is counted once. */
  async #count(arrivals: Arrival[], skipUnreadable: boolean): Promise<{ counted: Counted[]; skipped: Skipped[] }> {
    const counted: Counted[] = [];
    const skipped: Skipped[] = [];
    const pagesOf = new Map<StagedFile, Promise<{ mimeType: string; pages: number }>>();
    for (const a of arrivals) {
      let count = pagesOf.get(a.file);
      if (!count) {
        count = this.#pagesOf(a);
        pagesOf.set(a.file, count);
      }
      try {
        counted.push({ ...a, ...(await count) });
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        if (!skipUnreadable || err.code !== 'unreadable_document') throw refusedWhole(err, a.fileName);
        skipped.push({ fileName: a.fileName, reason: err.message });
      }
    }
    return { counted, skipped };
  }

  async #pagesOf(a: Arrival): Promise<{ mimeType: string; pages: number }> {
    if (a.file.size === 0)
      throw new GatewayError('unreadable_document', 'the file is empty (0 bytes): check the file and submit it again');
    const mimeType = await detectMimeType(a.file.head, a.fileName, a.declaredType);
    return { mimeType, pages: await this.#p.countPages({ path: a.file.path }, a.file.size, mimeType) };
  }

  /**
   * Each document gets its own blob (a hard link to the staged file: no copy), before one
   * transaction creates every document and reserves every page. Out of credits, nothing lands
   * and the blobs are removed.
   */
  async #admit(counted: Counted[]): Promise<Admitted[]> {
    const { store, documents, ledger, deps } = this.#p;
    const admitted: Admitted[] = [];
    try {
      for (const c of counted) {
        const blob = deps.newId('blob');
        await link(c.file.path, join(store.blobDir, blob));
        admitted.push({ ...c, blob, documentId: deps.newId('doc') });
      }
      transaction(store.db, () => {
        for (const a of admitted) {
          const doc = {
            document_id: a.documentId,
            parser_id: a.parser.parser_id,
            file_name: a.fileName,
            mime_type: a.mimeType,
            source_type: a.source,
            route: 'stored' as const,
            blob: a.blob,
            size: a.file.size,
            sha256: a.file.sha256,
            page_count: a.pages,
            created_at: deps.now(),
          };
          documents.insert(doc);
          ledger.reserve(doc, a.pages, doc.created_at);
        }
      });
      return admitted;
    } catch (err) {
      await Promise.all(admitted.map((a) => rm(join(store.blobDir, a.blob), { force: true })));
      if (err instanceof GatewayError && err.code === 'insufficient_credits') {
        const total = admitted.reduce((n, a) => n + a.pages, 0);
        throw new GatewayError(
          'insufficient_credits',
          `out of credits: these ${admitted.length} document(s) have ${total} page(s) and the balance is ${ledger.balance()}; nothing was accepted: top up and send them again`,
        );
      }
      throw err;
    }
  }

  /** Background extraction whatever the route, so extract-async fault rules apply here too. */
  #start(a: Admitted): ExtractAcceptedResponse {
    const { documents, processor, faults } = this.#p;
    const effect = faults.draw('extract-async');
    processor.enqueue(documents.get(a.documentId)!, effect?.type === 'async_error' ? effect.message : undefined);
    return accepted(a.documentId);
  }
}
