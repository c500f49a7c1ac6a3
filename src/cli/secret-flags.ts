import { CREDENTIAL_HEADER } from '../inputs/header-file.ts';

/**
 * A secret typed on a command line is visible to every user of the machine (`ps`,
 * /proc/<pid>/cmdline) and often kept in shell history and CI logs: said once at start, with
 * where the secret belongs instead. One wording for every command that takes one.
 */
export function visibleSecretNote(flag: string, prefer: string): string {
  return `note: ${flag} is visible to other users of this machine (ps); prefer ${prefer}`;
}

/** The notes for a batch or watch command line: --api-key, and a password inside a --state URL. */
export function batchSecretNotes(
  flags: { apiKey?: string | undefined; state?: string | undefined; header?: readonly string[] | undefined },
  inputs: readonly string[] = [],
): string[] {
  const notes: string[] = [];
  if (flags.apiKey !== undefined) notes.push(visibleSecretNote('--api-key', 'EXTRACT_API_KEY'));
  if (flags.state !== undefined && _hasPassword(flags.state))
    notes.push(visibleSecretNote('the password in --state', 'EXTRACT_STATE_URL, or a ~/.pgpass file'));
  if (_credentialHeader(flags.header))
    notes.push(
      visibleSecretNote(
        'a credential in --header',
        "--header @FILE (a file of 'Name: value' lines, as curl's -H @file)",
      ),
    );
  if (inputs.some((i) => /^https?:\/\//i.test(i) && _hasPassword(i)))
    notes.push(visibleSecretNote('the password in a URL', 'a list of URLs on standard input (-)'));
  return notes;
}

function _hasPassword(state: string): boolean {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(state)) return false;
  try {
    return new URL(state).password !== '';
  } catch {
    // Not a URL the parser takes: any "user:secret@" before the host still counts.
    return /^[^:]+:\/\/[^/@]*:[^/@]*@/.test(state);
  }
}

/** A `--header` typed as a value (not `@FILE`) whose name says it is a credential. */
function _credentialHeader(values: readonly string[] | undefined): boolean {
  return (values ?? []).some(
    (v) => !v.startsWith('@') && v.includes(':') && CREDENTIAL_HEADER.test(v.slice(0, v.indexOf(':')).trim()),
  );
}
