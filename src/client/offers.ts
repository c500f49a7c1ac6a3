/**
 * What a service offers, as far as this client has learnt it without paying: the interface names
 * upload-url and documents/{id}, but a service may be deployed with the inline extract alone,
 * and its inline body may be capped below what the interface leads one to expect. Learnt from
 * answers that cost nothing (a 404 on a route once the API has answered, a 413), said once, and
 * kept in the journal per target (journal-facts.ts: the parser fact's `offers`), so a later run
 * does not ask again. Absent: not known to be missing, so the interface's promise holds.
 */
export type Offers = {
  /** false: no upload route (upload-url is a 404 where the API answers). */
  upload?: false | undefined;
  /** false: no documents/{id} route, so a document's fate or pages cannot be asked for. */
  documents?: false | undefined;
  /** The largest inline request body it can take, in bytes: one less than a body it refused with 413. */
  inline_body_max?: number | undefined;
};

/** Bytes of the inline request's JSON besides the file's base64 (name, type, braces), a generous bound. */
const INLINE_ENVELOPE_BYTES = 2048;

/** The inline request body for a file of `size` bytes: base64 makes 4 bytes of every 3. */
function inlineBodyBytes(size: number): number {
  return Math.ceil(size / 3) * 4 + INLINE_ENVELOPE_BYTES;
}

export class ServiceOffers {
  #known: Offers;
  readonly #learnt: (offers: Offers, what: string) => void;

  /** `learnt`: called once per new fact, with the whole of what is known and a line saying what changed. */
  constructor(known: Offers = {}, learnt: (offers: Offers, what: string) => void = () => {}) {
    this.#known = { ...known };
    this.#learnt = learnt;
  }

  get known(): Offers {
    return { ...this.#known };
  }

  /** Known to have no upload route. */
  get noUpload(): boolean {
    return this.#known.upload === false;
  }

  /** Known to have no documents/{id} route. */
  get noDocuments(): boolean {
    return this.#known.documents === false;
  }

  /** Whether a file of `size` bytes fits the inline body this service is known to take (unknown: yes). */
  fitsInline(size: number): boolean {
    const max = this.#known.inline_body_max;
    return max === undefined || inlineBodyBytes(size) <= max;
  }

  /** The largest file that fits inline, when a 413 taught it. */
  get inlineFileMax(): number | undefined {
    const max = this.#known.inline_body_max;
    return max === undefined ? undefined : Math.max(0, Math.floor(((max - INLINE_ENVELOPE_BYTES) * 3) / 4));
  }

  /** A 404 where the route should be, once the API answered: learnt once. */
  missingRoute(route: 'upload' | 'documents', baseUrl: string): void {
    if (this.#known[route] === false) return;
    this.#known = { ...this.#known, [route]: false };
    const what =
      route === 'upload'
        ? `the service at ${baseUrl} has no upload route (upload-url answers 404 where its API answers): files go inline only; one too large for its inline route fails, uncharged`
        : `the service at ${baseUrl} has no route to read a document (documents/{id} answers 404 where its API answers): pages are counted by extract, and a document whose answer is lost cannot be asked about`;
    this.#learnt(this.known, what);
  }

  /**
   * upload-url answered, so the service has the interface's routes: a missing documents route
   * learnt from a 404 page that was not the service's (a proxy's, a CDN's) is unlearnt, so an
   * upload is never collected by a client that believes it cannot ask for the document.
   */
  documentsAfterAll(baseUrl: string): void {
    if (this.#known.documents !== false) return;
    this.#known = { ...this.#known, documents: undefined };
    this.#learnt(
      this.known,
      `the service at ${baseUrl} answers upload-url, so it reads documents too: the earlier 404 page on documents/{id} was not the service's`,
    );
  }

  /** A 413 on an inline body of `bodyBytes`: nothing that large or larger is sent inline again. */
  refusedInline(bodyBytes: number, baseUrl: string): void {
    const max = this.#known.inline_body_max;
    if (max !== undefined && max < bodyBytes) return;
    this.#known = { ...this.#known, inline_body_max: bodyBytes - 1 };
    this.#learnt(
      this.known,
      `the service at ${baseUrl} refused an inline body of ${bodyBytes} bytes as too large (HTTP 413): larger files are not sent inline again`,
    );
  }
}
