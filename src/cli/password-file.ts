import type { Env } from '../config/settings.ts';

/**
 * The password file a run unlocks PDFs with: --password-file, else the config store's
 * password_file (`extract config set password_file /path`), else none. The store (conf, slow to
 * load) is opened only when no flag says and its file names password_file. A file other users
 * can read is said once on stderr (pdf/passwords.ts passwordFileNote).
 */
export async function passwordFileOf(
  flags: { passwordFile?: string | undefined },
  env: Env,
): Promise<string | undefined> {
  const file = await _passwordFile(flags, env);
  if (file === undefined) return undefined;
  const note = (await import('../pdf/passwords.ts')).passwordFileNote(file);
  if (note !== undefined) process.stderr.write(`${note}\n`);
  return file;
}

async function _passwordFile(flags: { passwordFile?: string | undefined }, env: Env): Promise<string | undefined> {
  if (flags.passwordFile !== undefined) return flags.passwordFile;
  if (!(await import('../config/store-path.ts')).storeMayHold(env, 'password_file')) return undefined;
  return (await import('../config/store.ts')).openConfigStore({ env }).get('password_file');
}
