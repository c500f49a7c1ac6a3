import { open } from 'node:fs/promises';
import { EngineError } from '../../engine/types.ts';
import type { FsPath } from '../paths.ts';

/**
 * Pages the service would charge, counted on this machine for --dry-run and --max-credits by
 * the engine's own counter (the one the emulator charges by): a PDF's page tree, a TIFF's
 * pages, one page for any other image or a text file. A file the engine cannot read (damaged,
 * encrypted, of a type it does not take) has no estimate: null, since the service refuses it
 * uncharged rather than charging a guess. The file is read by ranges (a PDF's cross-reference
 * table and page tree, an image's headers), never whole: a 1 GB file is counted in kilobytes.
 */
export async function countPages(path: FsPath, mimeType: string): Promise<number | null> {
  // A client installed without the engine package (src/engine-package.ts) has no counter: no estimate.
  if (!(await import('../../engine-package.ts')).engineInstalled()) return null;
  // Imported here: the engine brings pdfjs, which is large, and only dry runs and --max-credits need it.
  const [{ countPagesInProcess }, { fileSource }] = await Promise.all([
    import('../../engine/extract.ts'),
    import('../../engine/source.ts'),
  ]);
  const source = await fileSource(await open(path, 'r'));
  try {
    return await countPagesInProcess(source, mimeType);
  } catch (err) {
    if (err instanceof EngineError) return null;
    throw err;
  } finally {
    await source.close();
  }
}

/**
 * --max-credits holds a run to a number of pages counted before sending: without the engine (a
 * client-only install) each count would be a guess, so the run stops before any send (exit 2)
 * with the line that installs it. A dry run goes on, its pages unknown.
 */
export async function requirePageCounter(): Promise<void> {
  (await import('../../engine-package.ts')).requireEngine('--max-credits');
}

/**
 * The pages of a file already in memory (an inline send's bytes): after the service has charged
 * for them, so nothing may fail here; a count the engine cannot make is null, never an error.
 */
export async function countPagesOfBytes(bytes: Uint8Array, mimeType: string): Promise<number | null> {
  try {
    const [{ countPagesInProcess }, { bytesSource }] = await Promise.all([
      import('../../engine/extract.ts'),
      import('../../engine/source.ts'),
    ]);
    return await countPagesInProcess(bytesSource(bytes), mimeType);
  } catch {
    return null;
  }
}
