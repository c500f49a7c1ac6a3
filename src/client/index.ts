/** The service API client: the four operations of the spec over undici, with typed errors and retries. */
export {
  ServiceClient,
  type ServiceClientOptions,
  type UploadSource,
  type ClientHooks,
  type FetchedDocument,
} from './service-client.ts';
export { ServiceError, type ServiceErrorKind, type Charge, describeErrorBody } from './errors.ts';
export { Circuit, DEFAULT_CIRCUIT, type CircuitPolicy } from './circuit.ts';
export { defaultClientDeps, realSleep, type ClientDeps, type Log, type LogLevel } from './deps.ts';
export {
  backoffDelay,
  parseRetryAfter,
  pollDelay,
  DEFAULT_POLL,
  DEFAULT_RETRY,
  type PollPolicy,
  type RetryPolicy,
} from './backoff.ts';
