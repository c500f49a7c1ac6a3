import { RECEIVER_DEFAULTS } from '../receiver/options.ts';

/**
 * Where `extract serve` listens unless told otherwise; a module of its own so the CLI's
 * flag list reads it without loading the server. The built-in receiver takes the port
 * `extract listen` would.
 */
export const SERVE_DEFAULTS = { host: '127.0.0.1', port: 8787, listenPort: RECEIVER_DEFAULTS.port } as const;
