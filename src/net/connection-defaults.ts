/**
 * The connection limits of `serve` and `listen` (connections.ts applies them), apart from the
 * server itself: `extract --help` shows the default, and importing connections.ts there would
 * load node:http, net and the streams (bench row 5, start-up).
 */
export type ConnectionLimits = { maxConnections: number; idleTimeoutMs: number; headersTimeoutMs: number };

export const CONNECTION_DEFAULTS: ConnectionLimits = {
  maxConnections: 512,
  idleTimeoutMs: 5000,
  headersTimeoutMs: 10_000,
};
