/** `extract watch`'s defaults, read by its flags (cli/commands.ts) and its code. */

/** A file is sent once its size and mtime have not changed for this long. */
export const DEFAULT_SETTLE_MS = 3000;

/** Every watched folder is listed again this often, for the events a network share loses. */
export const DEFAULT_RESCAN_MS = 60_000;
