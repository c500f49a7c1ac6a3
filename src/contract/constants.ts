/**
 * The service's fixed names, in a module without zod so that code on the start-up path
 * (the CLI's flag checks) can use them without loading the whole contract.
 */
export const API_PREFIX = '/api/v1';
export const API_KEY_PREFIX = 'ext_';
/**
 * What an API key may hold after its prefix. The spec does not show how keys are issued; a key
 * travels as a bearer token, whose syntax (RFC 6750 §2.1, b64token) is the widest the header
 * allows: letters, digits, `-._~+/`, then `=` padding. A key with anything else is a paste gone wrong.
 */
export const API_KEY_CHARS = 'A-Za-z0-9\\-._~+/';
export const API_KEY_SYNTAX = new RegExp(`^${API_KEY_PREFIX}[${API_KEY_CHARS}]+=*$`);

/** The emulator's ledger bounds: one top-up at most, and the balance at most (so sums stay exact integers). */
export const MAX_TOP_UP_PAGES = 1_000_000_000;
export const MAX_BALANCE_PAGES = 1_000_000_000_000;

/**
 * The largest file the emulator's engine can read at all (4 GiB): it reads a stored PDF by ranges,
 * but pdfjs addresses the file through one typed array of its length, which Node 20 caps at 2^32
 * bytes. Also the default and the maximum of `processing.max_file_bytes`, the rehearsal limit
 * beyond which a document ends in error, refunded; the real service has no ceiling (README: Emulator behaviour).
 */
export const MAX_ENGINE_FILE_BYTES = 2 ** 32;

/**
 * The default of `processing.max_pages`, the emulator's cap on one document's pages (the interface
 * states none): generous for any honest document, and a bound on how long one can hold the engine.
 */
export const DEFAULT_MAX_PAGES = 10_000;

/** Which service `extract serve` plays: the one its interface describes, or the one deployed (docs/serve-profiles.md). */
export const SERVE_PROFILES = ['interface', 'deployed'] as const;

/**
 * The connection limits of `serve`'s and `listen`'s HTTP servers (src/net/connections.ts applies
 * them): the defaults of serve's `connections` and of listen's flags, here so `--help` shows
 * them without loading node:http.
 */
export const CONNECTION_DEFAULTS = { maxConnections: 512, idleTimeoutMs: 5000, headersTimeoutMs: 10_000 } as const;
