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

  /** The kept encoded body of this parser's document; another parser's is not answered from here. */
  encodedFor(documentId: string, parserId: string): string | undefined {
    const known = this.#kept.get(documentId);
    return known?.parserId === parserId ? known.encoded : undefined;
  }

  /** Keeps a finished document's body and returns it encoded; undefined for a processing one, which is not kept. */
  keep(parserId: string, body: DocumentBody): string | undefined {
    if (body.status === 'processing') return undefined;
    const encoded = JSON.stringify(body);
    if (this.#kept.size >= this.#limit) this.#kept.delete(this.#kept.keys().next().value!);
    this.#kept.set(body.document_id, { parserId, encoded, bytes: Buffer.from(encoded) });
    return encoded;
  }
}
