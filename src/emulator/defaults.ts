import { RECEIVER_DEFAULTS } from '../receiver/options.ts';

/**
 * Where `extract serve` listens unless told otherwise; a module of its own so the CLI's
 * flag list reads it without loading the server. The built-in receiver takes the port after
 * `extract listen`'s, so a `listen` started beside a running `serve` (README: Receive webhooks
 * right after Rehearse) finds its own port free.
 */
export const SERVE_DEFAULTS = { host: '127.0.0.1', port: 8787, listenPort: RECEIVER_DEFAULTS.port + 1 } as const;
