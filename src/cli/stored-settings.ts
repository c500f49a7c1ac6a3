import { type ConfigKey, type Env, resolveMissingMarker, type SettingsStore } from '../config/settings.ts';
import type { MissingMarker } from '../outputs/missing-marker.ts';

/** What a command reads when no setting is left to look up in the config store. */
export const NO_STORE: SettingsStore = { get: () => undefined };

/**
 * The config store for one key. conf (with ajv and semver behind it) is slow to load, so the
 * store is opened only when its file names `key`: cron jobs and CI steps usually have none.
 */
export async function storeHolding(env: Env, key: ConfigKey): Promise<SettingsStore> {
  if (!(await import('../config/store-path.ts')).storeMayHold(env, key)) return NO_STORE;
  return (await import('../config/store.ts')).openConfigStore({ env });
}

/** The missing marker a command reads results with (config/settings.ts resolveMissingMarker). */
export async function missingMarkerOf(
  flags: { missingMarker?: string | undefined; noMissingMarker?: boolean | undefined },
  env: Env,
): Promise<MissingMarker> {
  const flagged = flags.noMissingMarker === true || flags.missingMarker !== undefined;
  return resolveMissingMarker(flags, flagged ? NO_STORE : await storeHolding(env, 'missing_marker'));
}

/**
 * The password file a run unlocks PDFs with: --password-file, else the config store's
 * password_file (`extract config set password_file /path`), else none. A file other users
 * can read is said once on stderr (pdf/passwords.ts passwordFileNote).
 */
export async function passwordFileOf(
  flags: { passwordFile?: string | undefined },
  env: Env,
): Promise<string | undefined> {
  const file = flags.passwordFile ?? (await storeHolding(env, 'password_file')).get('password_file');
  if (file === undefined) return undefined;
  const note = (await import('../pdf/passwords.ts')).passwordFileNote(file);
  if (note !== undefined) process.stderr.write(`${note}\n`);
  return file;
}
