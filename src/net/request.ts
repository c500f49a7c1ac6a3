import { type Dispatcher, errors, getGlobalDispatcher } from 'undici';

/**
 * One HTTP request to `url`, by undici's Dispatcher API: what undici's top-level `request(url,
 * options)` does, with the dispatcher given (an Agent, a MockAgent in tests) or undici's global one.
 *
 * Not the top-level function, because of what it costs to load: undici's index loads all of undici
 * (fetch, WebSocket, the mock agents, the caches), where a request needs its dispatcher and its
 * API, about a third of those modules. The build (scripts/build.ts) gives the bundle
 * only those parts under the name `undici`; tests, run from src/, get the whole package and the same
 * functions.
 */
export function requestUrl(
  url: string,
  options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'>,
  dispatcher: Dispatcher = getGlobalDispatcher(),
): Promise<Dispatcher.ResponseData> {
  const parsed = new URL(url);
  // undici's own check, as its request(url) makes it: the same error for the same mistake.
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
  return dispatcher.request({ ...options, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` });
}
