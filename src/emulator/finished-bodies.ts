import type { DocumentBody } from '../contract/index.ts';

/** How many finished documents' bodies are kept encoded (oldest dropped first). */
const FINISHED_CACHE_SIZE = 2000;

/** A finished document's body as sent: `bytes` is `encoded` as UTF-8. */
export type KeptBody = { parserId: string; encoded: string; bytes: Buffer };

/**
 * The encoded bodies of finished documents, by document_id, for GET documents/{id} (routes/api.ts)
 * and the server's fast path for kept reads (routes/fast-reads.ts). A completed or failed
 * document never changes again (documents.ts moves only a processing one), so polling clients
 * then cost a lookup, not a database read, a JSON.parse and a JSON.stringify. A processing
 * document is never kept: it is read afresh every time.
 */
export class FinishedBodies {
  readonly #kept = new Map<string, KeptBody>();
  readonly #limit: number;

  constructor(limit = FINISHED_CACHE_SIZE) {
    this.#limit = limit;
  }

  /** The kept body of a document, whoever's it is: the caller compares `parserId`. */
  get(documentId: string): KeptBody | undefined {
    return this.#kept.get(documentId);
  }

  /**
   * GET documents/{id}'s body: this parser's kept one, else `load`'s (the gateway's read, which
   * throws for a document that is not this parser's), kept if finished. A processing document
   * comes back as its body, to be encoded by the caller; a finished one already encoded.
   */
  read(
    parserId: string,
    documentId: string,
    load: () => DocumentBody,
  ): { encoded: string } | { processing: DocumentBody } {
    const known = this.#kept.get(documentId);
    if (known?.parserId === parserId) return { encoded: known.encoded };
    const body = load();
    if (body.status === 'processing') return { processing: body };
    return { encoded: this.#keep(parserId, body) };
  }

  #keep(parserId: string, body: DocumentBody): string {
    const encoded = JSON.stringify(body);
    if (this.#kept.size >= this.#limit) this.#kept.delete(this.#kept.keys().next().value!);
    this.#kept.set(body.document_id, { parserId, encoded, bytes: Buffer.from(encoded) });
    return encoded;
  }
}
