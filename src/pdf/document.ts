/**
 * A PDF opened on this machine to cut pages out of it, to find its blank pages, or to unlock it:
 * the one module that loads the PDF library (@cantoo/pdf-lib, ARCHITECTURE.md says why), and
 * only when a run needs it (`--pages`, `--split`, an encrypted PDF): a run of plain PDFs never
 * loads it. A password is tried here and goes nowhere else: not into an error, a log or a fact.
 */
import type { PDFDocument, PDFDict } from '@cantoo/pdf-lib';
import { constants, inflateSync } from 'node:zlib';
import { drawsTextOrImage } from './content.ts';
import { objectStreamBomb } from './object-streams.ts';

/**
 * Why a PDF cannot be cut or unlocked:
 * - encrypted: no password given opens it (or none was given)
 * - damaged: the library cannot read it as a PDF
 */
export type PdfErrorCode = 'encrypted' | 'damaged';

export class PdfError extends Error {
  readonly code: PdfErrorCode;
  constructor(code: PdfErrorCode, message: string) {
    super(message);
    this.name = 'PdfError';
    this.code = code;
  }
}

/** A PDF open for cutting: its page count, which pages are blank, and the bytes of a selection. */
export type OpenedPdf = {
  pageCount: number;
  /** Whether it was encrypted (and a password, or the empty one, opened it). */
  unlocked: boolean;
  /** Whether page `page` (1-based) shows no text and paints no image. */
  isBlank(page: number): boolean;
  /** A new PDF, not encrypted, holding these pages (1-based, in this order). */
  cut(pages: readonly number[]): Promise<Uint8Array>;
};

/** The words of a PDF the passwords given do not open (the issue's own words start it). */
export function lockedMessage(passwordsGiven: boolean): string {
  return passwordsGiven
    ? 'encrypted: no password in --password-file opens it: add its password to the file (one a line), then rerun'
    : 'encrypted: give --password-file (a file of passwords, one a line) to unlock it on this machine, then rerun';
}

type Library = typeof import('@cantoo/pdf-lib');
let library: Promise<Library> | undefined;
/** The library, imported at the first PDF that needs it. */
function _library(): Promise<Library> {
  library ??= import('@cantoo/pdf-lib');
  return library;
}

/** The library's own words when a password is wanted or wrong (its crypto module's errors). */
function _isPasswordRefusal(err: unknown): boolean {
  const message = err instanceof Error ? err.message : '';
  return message === 'NEEDS PASSWORD' || message === 'Password incorrect';
}

/**
 * Opens a PDF. An encrypted one is tried with the empty password first (a file locked only
 * against editing opens with it in any reader), then with each of `passwords` in turn; none
 * opening it is a PdfError `encrypted`, whose message names no password.
 */
export async function openPdf(bytes: Uint8Array, passwords: readonly string[], encrypted: boolean): Promise<OpenedPdf> {
  const bomb = objectStreamBomb(bytes);
  if (bomb !== undefined) throw new PdfError('damaged', `not a PDF this machine can cut: ${bomb}`);
  const lib = await _library();
  const load = (password?: string): Promise<PDFDocument> =>
    lib.PDFDocument.load(bytes, { updateMetadata: false, ...(password === undefined ? {} : { password }) });
  if (!encrypted) {
    try {
      return _opened(lib, await load(), false);
    } catch (err) {
      if (!(err instanceof lib.EncryptedPDFError)) throw _damaged(err);
    }
  }
  for (const password of ['', ...passwords]) {
    try {
      return _opened(lib, await load(password), true);
    } catch (err) {
      if (!_isPasswordRefusal(err)) throw _unreadable(err);
    }
  }
  throw new PdfError('encrypted', lockedMessage(passwords.length > 0));
}

function _damaged(err: unknown): PdfError {
  return new PdfError('damaged', `not a PDF this machine can cut: ${err instanceof Error ? err.message : String(err)}`);
}

/** An error other than a refused password while decrypting: an encryption the library does not know, or damage. */
function _unreadable(err: unknown): PdfError {
  const message = err instanceof Error ? err.message : String(err);
  return /encryption|crypt|key length/i.test(message)
    ? new PdfError('encrypted', `encrypted in a way this machine cannot unlock (${message}): send it unlocked`)
    : _damaged(err);
}

function _opened(lib: Library, doc: PDFDocument, unlocked: boolean): OpenedPdf {
  const pages = doc.getPages();
  return {
    pageCount: pages.length,
    unlocked,
    isBlank: (page) => !_pageDraws(lib, doc, pages[page - 1]!.node),
    async cut(selection) {
      const out = await lib.PDFDocument.create({ updateMetadata: false });
      for (const page of await out.copyPages(
        doc,
        selection.map((p) => p - 1),
      ))
        out.addPage(page);
      return out.save();
    },
  };
}

/** Forms nested deeper than this are taken as drawing (a loop of forms would not end otherwise). */
const MAX_FORM_DEPTH = 12;

/**
 * The most bytes one content stream is inflated to, to tell a blank page: a page with more is
 * taken as drawing. A few kilobytes of deflate can claim gigabytes (a bomb), which the library's
 * decoder would hold whole in memory.
 */
const MAX_CONTENT_BYTES = 64 * 1024 * 1024;

class ContentTooLarge extends Error {}

/** A content stream's bytes, decoded; ContentTooLarge past MAX_CONTENT_BYTES. */
function _contentBytes(lib: Library, stream: unknown): Uint8Array {
  const { PDFArray, PDFName, PDFRawStream, decodePDFRawStream } = lib;
  if (!(stream instanceof PDFRawStream)) return new Uint8Array();
  const filter = stream.dict.lookup(PDFName.of('Filter'));
  const only = filter instanceof PDFArray && filter.size() === 1 ? filter.lookup(0) : filter;
  // Deflate, the content streams of nearly every PDF: node's zlib stops at the bound.
  if (only === PDFName.of('FlateDecode') && stream.dict.lookup(PDFName.of('DecodeParms')) === undefined) {
    try {
      // Z_SYNC_FLUSH: a stream cut short gives what it holds, as readers take it.
      return inflateSync(stream.contents, { maxOutputLength: MAX_CONTENT_BYTES, finishFlush: constants.Z_SYNC_FLUSH });
    } catch (err) {
      if (err instanceof RangeError) throw new ContentTooLarge();
      // Damaged before the bound: the library's lenient decoder reads what it can.
    }
  }
  const decoded = decodePDFRawStream(stream).decode();
  if (decoded.length > MAX_CONTENT_BYTES) throw new ContentTooLarge();
  return decoded;
}

/** Whether a page (or a form XObject, by its dictionary) shows text or paints an image. */
function _pageDraws(
  lib: Library,
  doc: PDFDocument,
  node: { Contents(): unknown; Resources(): PDFDict | undefined },
): boolean {
  const { PDFArray, PDFRawStream, PDFName } = lib;
  const streamBytes = (stream: unknown): Uint8Array => _contentBytes(lib, stream);
  const contents = node.Contents();
  const parts = contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref)) : [contents];
  const drawsIn =
    (resources: PDFDict | undefined, depth: number) =>
    (name: string): boolean => {
      const xobjects = resources?.lookupMaybe(PDFName.of('XObject'), lib.PDFDict);
      const xobject = xobjects?.lookup(PDFName.of(name));
      if (!(xobject instanceof PDFRawStream)) return false;
      const subtype = xobject.dict.lookupMaybe(PDFName.of('Subtype'), PDFName);
      if (subtype === PDFName.of('Image')) return true;
      if (subtype !== PDFName.of('Form')) return false;
      if (depth >= MAX_FORM_DEPTH) return true;
      const own = xobject.dict.lookupMaybe(PDFName.of('Resources'), lib.PDFDict) ?? resources;
      return drawsTextOrImage(streamBytes(xobject), drawsIn(own, depth + 1));
    };
  const resources = node.Resources();
  try {
    return parts.some((part) => drawsTextOrImage(streamBytes(part), drawsIn(resources, 0)));
  } catch (err) {
    if (err instanceof ContentTooLarge) return true;
    throw err;
  }
}
