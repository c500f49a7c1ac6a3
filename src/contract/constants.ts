/**
 * The service's fixed names, in a module without zod so that code on the start-up path
 * (the CLI's flag checks) can use them without loading the whole contract.
 */
export const API_PREFIX = '/api/v1';
export const API_KEY_PREFIX = 'ext_';

/** The emulator's ledger bounds: one top-up at most, and the balance at most (so sums stay exact integers). */
export const MAX_TOP_UP_PAGES = 1_000_000_000;
export const MAX_BALANCE_PAGES = 1_000_000_000_000;

/** The largest file the emulator's engine reads; the real service has no such ceiling (README: Emulator behaviour). */
export const MAX_ENGINE_FILE_BYTES = 256 * 1024 * 1024;
