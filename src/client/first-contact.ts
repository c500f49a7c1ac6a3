import { ServiceError } from './errors.ts';

/** Failures only the service's API answers: after one, a 404 page elsewhere is a missing route, not a wrong address. */
const SHOWS_THE_API: ReadonlySet<string> = new Set([
  'auth',
  'out_of_credits',
  'not_found',
  'rejected',
  'inline_unavailable',
  'ticket_expired',
]);

/**
 * Until the service has answered once, one API request at a time: a base URL that is not the
 * service is then found by one request, not by one per file sent at once (failures.ts says so in one error).
 */
export class FirstContact {
  /** The service's API has answered: an answer, or one of its own refusals. */
  verified = false;
  #probe: Promise<unknown> | undefined;
  #wrong: ServiceError | undefined;

  /** `request` sent at once when the service is known, else after the request in flight tells whether it is. */
  async through<T>(request: () => Promise<T>): Promise<T> {
    if (this.verified) return request();
    while (this.#probe !== undefined) {
      await this.#probe.catch(() => {});
      if (this.#wrong !== undefined) throw this.#wrong;
      if (this.verified) return request();
    }
    const probe = request();
    this.#probe = probe;
    try {
      const answer = await probe;
      this.verified = true;
      return answer;
    } catch (err) {
      if (err instanceof ServiceError && err.kind === 'wrong_service') this.#wrong = err;
      // Only the API's own refusals show it is the service; a proxy's 5xx or 429 answers for anything.
      else if (err instanceof ServiceError && SHOWS_THE_API.has(err.kind)) this.verified = true;
      throw err;
    } finally {
      this.#probe = undefined;
    }
  }
}
