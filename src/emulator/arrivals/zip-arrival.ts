/**
 * A zip that arrives (the application's upload, an email's attachment) is a folder, as the
 * batch client reads one (src/inputs/): each member a document of its own, named
 * `batch.zip!a.pdf`, read by the same reader within the same bounds. A zip that breaks them
 * (a bomb, a member whose size lies, a link, `../`) is refused whole, as any bad file of an
 * arrival is: nothing from it is accepted.
 */
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { BOUNDS, containerKind, nameProblem, Refused } from '../../inputs/container.ts';
import { partName } from '../../inputs/part.ts';
import { readZip } from '../../inputs/zip.ts';
import { detectFileType, isDocumentType } from '../../mime/detect.ts';
import { GatewayError } from '../errors.ts';
import { StagedTooLarge, stageStream, unstage, type StagedFile } from '../staging.ts';
import { MAX_ARRIVAL_FILE_BYTES } from './intake.ts';

/** The most members one zip of an arrival may hold: each is counted and stored as a document. */
const MAX_ZIP_MEMBERS = 1000;

type Staged = { file: StagedFile; fileName: string; declaredType: string | undefined };

/** Whether an arrival is a zip to unpack: by its name, or the type its sender declared. */
export function isZipArrival(fileName: string, declaredType: string | undefined): boolean {
  return containerKind(fileName) === 'zip' || declaredType === 'application/zip';
}

/** A staged zip's members, each staged as a file of its own (the caller unstages them and the zip). */
export async function unzipArrival(partialDir: string, zip: Staged): Promise<Staged[]> {
  const members: Staged[] = [];
  const refuse = (why: string) =>
    new GatewayError('invalid_request', `${zip.fileName}: ${why}; nothing from this request was accepted`);
  const handle = await open(zip.file.path);
  try {
    for await (const m of readZip(handle, zip.file.size, { ...BOUNDS, members: MAX_ZIP_MEMBERS })) {
      const problem = m.kind === 'refused' ? m.reason : nameProblem(m.name, BOUNDS);
      if (problem !== undefined) throw refuse(`${m.name}: ${problem}`);
      if (m.kind !== 'file') continue;
      const bytes = await m.open();
      const max = Math.min(m.declared ?? MAX_ARRIVAL_FILE_BYTES, MAX_ARRIVAL_FILE_BYTES);
      const body = bytes instanceof Uint8Array ? Readable.from([bytes]) : bytes;
      const file = await stageStream(partialDir, body, { maxBytes: max });
      const fileName = partName(zip.fileName, m.name);
      // A member that is no document (a readme, a spreadsheet) is left out, as the batch client leaves it.
      if (isDocumentType(await detectFileType(file.head, fileName)))
        members.push({ file, fileName, declaredType: undefined });
      else await unstage(file);
    }
    return members;
  } catch (err) {
    await Promise.all(members.map((m) => unstage(m.file)));
    if (err instanceof GatewayError) throw err;
    if (err instanceof Refused) throw refuse(err.message);
    if (err instanceof StagedTooLarge)
      throw refuse('a member expands past the size the archive says it holds (a zip bomb?)');
    throw refuse(`a damaged zip archive (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    await handle.close();
  }
}
