/**
 * `--password-file FILE`: the passwords to try on an encrypted PDF, one a line, in order. They
 * stay in this process: document.ts tries them, and no message, log line, fact or record holds
 * one (an error here names the file, never a line of it).
 */
import { readFileSync } from 'node:fs';
import { describeFsError } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { readableByOthersNote } from '../private-files.ts';

/** The passwords of a password file: each line, without its line ending; blank lines left out. */
export function parsePasswords(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line !== '');
}

/** Reads a password file when the run starts, before anything is sent. */
export function readPasswordFile(path: string, flag = '--password-file'): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ExtractError(
      'usage',
      `${flag} ${path}: cannot read it (${describeFsError(err)}): give a file of passwords, one a line`,
    );
  }
  const passwords = parsePasswords(text);
  if (passwords.length === 0) {
    throw new ExtractError('usage', `${flag} ${path} holds no password: write one a line`);
  }
  return passwords;
}

/** A note when the password file can be read by other users of the machine (private-files.ts). */
export function passwordFileNote(path: string): string | undefined {
  return readableByOthersNote(path, 'the password file');
}
