/** The service API client: the four operations of the spec over undici, with typed errors and retries. */
export { ServiceClient } from './service-client.ts';
export { ServiceError } from './errors.ts';
export { Circuit, type CircuitPolicy } from './circuit.ts';
export { defaultClientDeps, type ClientDeps, type LogLevel } from './deps.ts';
export type { PollPolicy } from './backoff.ts';
