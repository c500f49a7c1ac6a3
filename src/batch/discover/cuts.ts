/**
 * Pages and splits, cut on this machine: with `--pages`, `--split` or `--password-file`, each
 * PDF among the discovered files is replaced by its parts (src/inputs/part.ts), each a PDF of
 * its own in the run's part space, named `scan.pdf#pages=3-4`: the rest of the run (plan,
 * send, records, --move-done) sees input files, as it sees an archive's members.
 *
 * A part's identity is its bytes, which are a function of the file's content and the pages
 * selected (the cut writes no date and no random ID: document.ts): the same selection of the
 * same file is the same document, found in the journal and paid once; another selection is
 * other bytes, another document. An encrypted PDF is unlocked here with the empty password or
 * one of `--password-file`'s and sent unlocked, under its own name when nothing is cut; one that
 * none opens is handed on as it is, and the send step fails it unsent (pdf/locked.ts).
 */
import type { DiscoveryStream, InputFile, UnreadableInput } from '../discover.ts';
import { resolve } from 'node:path';
import { stampOf } from '../discover.ts';
import { describeFsError, isDiskFull } from '../../errno.ts';
import { openInput } from '../facts.ts';
import { printableBase } from '../paths.ts';
import { inert } from '../../inert.ts';
import { type PartOf, type PartSpace, partName, partOf } from '../../inputs/part.ts';
import { type OpenedPdf, openPdf, PdfError } from '../../pdf/document.ts';
import { readPasswordFile } from '../../pdf/passwords.ts';
import { type PageSelection, pageParts, type SplitRule, selectedPages } from '../../pdf/selection.ts';
import { pdfIsEncrypted } from '../../pdf/trailer.ts';

export type CutOptions = {
  pages?: PageSelection | undefined;
  split?: SplitRule | undefined;
  /** The passwords of --password-file, in order (absent: none given). */
  passwords?: readonly string[] | undefined;
};

/** A run's options for cutting, the password file read (relative to `cwd`) before anything is sent. */
export function cutOptionsOf(
  options: { pages?: PageSelection | undefined; split?: SplitRule | undefined; passwordFile?: string | undefined },
  cwd: string,
): CutOptions {
  return {
    pages: options.pages,
    split: options.split,
    passwords: options.passwordFile === undefined ? undefined : readPasswordFile(resolve(cwd, options.passwordFile)),
  };
}

/** Whether a run cuts or unlocks PDFs at all (else no PDF is opened and the library never loads). */
export function cutsPdfs(options: CutOptions): boolean {
  return options.pages !== undefined || options.split !== undefined || options.passwords !== undefined;
}

/** The discovered files with each PDF replaced by its parts (cut, unlocked), written to `space`. */
export function cutPdfInputs(discovery: DiscoveryStream, options: CutOptions, space: PartSpace): DiscoveryStream {
  const { found } = discovery;
  async function* chunks(): AsyncGenerator<InputFile[]> {
    for await (const chunk of discovery.chunks) {
      const out: InputFile[] = [];
      for (const file of chunk) {
        const parts = await _cutInput(file, options, space, found.unreadable);
        found.files += parts.length - 1;
        out.push(...parts);
      }
      if (out.length > 0) yield out;
    }
  }
  return { found, chunks: chunks() };
}

const PDF_MAGIC = Buffer.from('%PDF-');

/** One input file's parts: itself when it is no PDF or needs nothing done; none when it cannot be cut. */
async function _cutInput(
  file: InputFile,
  options: CutOptions,
  space: PartSpace,
  unreadable: UnreadableInput[],
): Promise<InputFile[]> {
  const cutting = options.pages !== undefined || options.split !== undefined;
  let bytes: Buffer;
  let encrypted: boolean;
  let stamp: string;
  try {
    const handle = await openInput(file.path, file.within);
    try {
      const info = await handle.stat();
      const head = Buffer.alloc(PDF_MAGIC.length);
      await handle.read(head, 0, head.length, 0);
      if (!head.equals(PDF_MAGIC)) return [file];
      encrypted = await pdfIsEncrypted(handle, info.size);
      if (!encrypted && !cutting) return [file];
      stamp = stampOf(info);
      bytes = Buffer.alloc(info.size);
      for (let at = 0; at < bytes.length; ) {
        const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
        if (bytesRead === 0) break;
        at += bytesRead;
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    unreadable.push({ file: file.file, reason: `cannot read ${file.file}: ${describeFsError(err)}` });
    return [];
  }
  let pdf: OpenedPdf;
  try {
    pdf = await openPdf(bytes, options.passwords ?? [], encrypted);
  } catch (err) {
    // Locked past every password: sent on as it is, the send step fails it unsent and sets it aside.
    if (err instanceof PdfError && err.code === 'encrypted') return [file];
    const why = err instanceof Error ? err.message : String(err);
    unreadable.push({ file: file.file, reason: `${inert(file.file)}: ${why}; not sent` });
    return [];
  }
  try {
    // A URL's bytes are the run's own copy: its parts are a part of nothing --move-done could move.
    const of = file.remote === true ? undefined : partOf(file, stamp);
    return await _partsOf(file, pdf, of, options, space, unreadable);
  } catch (err) {
    // A page the library cannot copy or read, a part space that refuses a write: this file's failure, not the run's.
    const why = isDiskFull(err)
      ? space.fullText('its pages')
      : `cannot cut it (${err instanceof Error ? err.message : String(err)})`;
    unreadable.push({ file: file.file, reason: `${inert(file.file)}: ${why}; not sent` });
    return [];
  }
}

/** The parts of an opened PDF, written to the part space: itself unlocked when nothing is cut. */
async function _partsOf(
  file: InputFile,
  pdf: OpenedPdf,
  of: PartOf | undefined,
  options: CutOptions,
  space: PartSpace,
  unreadable: UnreadableInput[],
): Promise<InputFile[]> {
  const name = printableBase(file.path);
  if (options.pages === undefined && options.split === undefined) {
    const written = await space.write(name, await pdf.cut(_allPages(pdf.pageCount)), Number.POSITIVE_INFINITY);
    return [{ ...file, path: written.path, size: written.size, stamp: undefined, within: undefined, part: of }];
  }
  const parts = pageParts(selectedPages(options.pages, pdf.pageCount), options.split, (p) => pdf.isBlank(p));
  if (parts.length === 0) {
    unreadable.push({
      file: file.file,
      reason: `${inert(file.file)}: ${options.pages === undefined ? 'every page is blank' : `--pages ${options.pages.text} selects none of its ${pdf.pageCount} pages`}; not sent`,
    });
    return [];
  }
  // Every page, in order, of a file not locked: the cut would be the same pages in other bytes,
  // another document to the journal. The file as it is: one sent whole before is not paid again.
  if (parts.length === 1 && !pdf.unlocked && _isEvery(parts[0]!.pages, pdf.pageCount)) return [file];
  const out: InputFile[] = [];
  for (const part of parts) {
    const written = await space.write(name, await pdf.cut(part.pages), Number.POSITIVE_INFINITY);
    out.push({
      file: partName(file.file, part.label, '#'),
      path: written.path,
      realPath: `${file.realPath}#${part.label}`,
      size: written.size,
      explicit: file.explicit,
      part: of,
      ...(file.remote === true ? { remote: true, rel: file.rel } : {}),
    });
  }
  return out;
}

function _isEvery(pages: readonly number[], count: number): boolean {
  return pages.length === count && pages.every((p, i) => p === i + 1);
}

function _allPages(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i + 1);
}
