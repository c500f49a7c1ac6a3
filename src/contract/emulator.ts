import { z } from 'zod';

/** Shapes of the emulator's own surface under /_emulator/ (not part of the emulated API). */

export const EMULATOR_PREFIX = '/_emulator';

export const LedgerEntry = z.object({
  kind: z.enum(['reserve', 'refund', 'topup']),
  document_id: z.string().nullable(),
  file_name: z.string().nullable(),
  sha256: z.string().nullable(),
  pages: z.number().int(),
  at: z.string(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const LedgerBody = z.object({ balance: z.number().int(), entries: z.array(LedgerEntry) });
export type LedgerBody = z.infer<typeof LedgerBody>;

export const TopUpRequest = z.object({ pages: z.number().int().positive() });
