/**
 * A part of an archive refused on this machine (a `../`, absolute or link member, or the whole
 * archive: a bomb, damage, a bound) is a document of its own to the journal, known by these
 * bytes: the archive's content and the member's name. The send step fails it unsent and at no
 * cost, and the journal sets it aside as it does a locked PDF: the next night lists it (exit 0),
 * `extract status --failed` names it, `--retry-failed` reads it again. An archive that changes is
 * another content, so its refusals are said once more.
 */

/** The bytes a refusal is known by (not a document: no service is ever sent them). */
export function refusalBytes(archiveSha256: string, member: string): Buffer {
  return Buffer.from(
    `extract: a part refused on this machine\narchive sha256 ${archiveSha256}\nmember ${JSON.stringify(member)}\n`,
  );
}
