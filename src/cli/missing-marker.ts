import { type Env, resolveMissingMarker } from '../config/settings.ts';
import type { MissingMarker } from '../outputs/missing-marker.ts';

/**
 * The missing marker a command reads results with (config/settings.ts resolveMissingMarker).
 * The config store (conf, slow to load) is opened only when no flag says and its file names
 * missing_marker.
 */
export async function missingMarkerOf(
  flags: { missingMarker?: string | undefined; noMissingMarker?: boolean | undefined },
  env: Env,
): Promise<MissingMarker> {
  const flagged = flags.noMissingMarker === true || flags.missingMarker !== undefined;
  const stored = !flagged && (await import('../config/store-path.ts')).storeMayHold(env, 'missing_marker');
  const store = stored ? (await import('../config/store.ts')).openConfigStore({ env }) : { get: () => undefined };
  return resolveMissingMarker(flags, store);
}
