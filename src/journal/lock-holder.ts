import { z } from 'zod';

/**
 * What a lock file says of its holder (lock.ts). Its own module so that zod loads only when a
 * lock file is already there and must be read: a run that takes a free lock validates nothing.
 */
export const LockHolder = z.object({ pid: z.number().int(), host: z.string(), started: z.string() });
export type LockHolder = z.infer<typeof LockHolder>;
