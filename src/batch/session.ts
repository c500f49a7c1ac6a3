import type { SettingSource } from '../config/settings.ts';

/** Where the key came from: a flag, the environment, the config store, or the --local emulator. */
export type KeySource = SettingSource | 'local';

/**
 * What to do when the service rejects the key, naming where it came from and a command that
 * works (the key itself is never shown).
 */
export function keyHint(source: KeySource | undefined): string {
  switch (source) {
    case 'flag':
      return "the key came from --api-key: pass your parser's key (better: set EXTRACT_API_KEY, which other users cannot see in the process list)";
    case 'env':
      return "the key came from EXTRACT_API_KEY: set it to your parser's key (ext_…)";
    case 'config':
      return 'the key came from the config store: replace it with "extract config set api_key -" (reads the key from standard input); "extract config list" shows what is stored';
    case 'local':
      return 'the key came from the --local emulator: this is a bug, please report it';
    default:
      return 'pass --api-key, set EXTRACT_API_KEY, or run "extract config set api_key -"';
  }
}
