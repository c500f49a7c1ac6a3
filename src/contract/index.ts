/** The one contract: every wire shape of the service, the emulator's config and surface, as zod schemas. */
export * from './api.ts';
export * from './config.ts';
export * from './emulator.ts';
export * from './fields.ts';
export * from './results.ts';
export * from './webhook.ts';
export * from './problems.ts';
export * from './receiver.ts';
