/**
 * The service's fixed names, in a module without zod so that code on the start-up path
 * (the CLI's flag checks) can use them without loading the whole contract.
 */
export const API_PREFIX = '/api/v1';
export const API_KEY_PREFIX = 'ext_';
