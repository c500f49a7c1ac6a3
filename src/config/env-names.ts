/**
 * The environment variables of the settings, in a module of their own so the CLI's help text
 * names them without loading settings.ts (node:crypto and the checks).
 */
export const ENV_API_KEY = 'EXTRACT_API_KEY';
export const ENV_BASE_URL = 'EXTRACT_BASE_URL';
/** The shared journal of many workers (README: "Many machines"); --state wins over it. */
export const ENV_STATE_URL = 'EXTRACT_STATE_URL';
/** Points the config store at another directory (tests, CI, several accounts). */
export const ENV_CONFIG_DIR = 'EXTRACT_CONFIG_DIR';
