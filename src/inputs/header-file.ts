/**
 * `--header @FILE`: the source's headers read from a file, one `Name: value` a line, as curl's
 * `-H @file` reads them, so a credential is not typed on the command line, where every user of
 * the machine sees it (`ps`, /proc/<pid>/cmdline) and shell history keeps it. The file is held
 * to --password-file's rules: an error names the file, never a line of it, and a file other
 * users can read gets a note (chmod 600).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describeFsError } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { readableByOthersNote } from '../private-files.ts';

/** A header whose name says it carries a credential: its value is kept out of every output (redact.ts). */
export const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|.*(token|key|secret|auth|session).*)$/i;

/** The `--header` values with each `@FILE` replaced by its lines (blank lines left out); `note` hears a file others can read. */
export function headerLines(values: readonly string[], cwd: string, note: (text: string) => void): string[] {
  const lines: string[] = [];
  for (const value of values) {
    if (!value.startsWith('@')) {
      lines.push(value);
      continue;
    }
    const path = resolve(cwd, value.slice(1));
    let text: string;
    try {
      // A leading byte-order mark (a file saved by a Windows editor) is not part of the first name.
      text = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
    } catch (err) {
      throw new ExtractError(
        'usage',
        `--header ${value}: cannot read it (${describeFsError(err)}): give a file of 'Name: value' lines`,
      );
    }
    const read = text
      .split('\n')
      .map((line) => line.replace(/\r$/, ''))
      .filter((line) => line.trim() !== '');
    if (read.length === 0)
      throw new ExtractError('usage', `--header ${value} holds no header: write one 'Name: value' a line`);
    const others = readableByOthersNote(path, 'the header file');
    if (others !== undefined) note(others);
    lines.push(...read);
  }
  return lines;
}
