import { setTimeout as delay } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';

/** Time and identifiers, injected so tests can run the emulator's rules on a fake clock. */
export type EmulatorDeps = {
  now(): number;
  sleep(ms: number): Promise<void>;
  newId(prefix: string): string;
};

export const realDeps: EmulatorDeps = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? delay(ms) : Promise.resolve()),
  newId: (prefix) => `${prefix}_${randomBytes(12).toString('hex')}`,
};
