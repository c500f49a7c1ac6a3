import { open } from 'node:fs/promises';
import type { EngineSource } from './types.ts';

/**
 * A document's bytes as the engine reads them: by ranges, so that a stored file of any size is
 * never held whole (a PDF's page count needs its cross-reference table and page tree, a few
 * kilobytes of a gigabyte). Bytes already in memory are a source too.
 */
export interface ByteSource {
  readonly size: number;
  /** Up to `length` bytes from `position` (fewer only at the end of the file). */
  read(position: number, length: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** What a source is opened from: bytes, a stored file, or a source already open (the caller closes that one). */
export type SourceInput = EngineSource | ByteSource;

/** The part of a file handle a file source uses; injected in tests to count what is read. */
export type FileReader = {
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<{ size: number }>;
  close(): Promise<void>;
};

const isByteSource = (input: SourceInput): input is ByteSource =>
  !(input instanceof Uint8Array) && typeof (input as Partial<ByteSource>).read === 'function';

export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: async (position, length) => bytes.subarray(position, Math.min(bytes.length, position + length)),
    close: async () => {},
  };
}

/** A source over an open file; it owns `reader` (closed with it, or at once if the file cannot be sized). */
export async function fileSource(reader: FileReader): Promise<ByteSource> {
  let size: number;
  try {
    ({ size } = await reader.stat());
  } catch (e) {
    await reader.close();
    throw e;
  }
  return {
    size,
    async read(position, length) {
      const want = Math.max(0, Math.min(length, size - position));
      const buffer = new Uint8Array(want);
      let got = 0;
      while (got < want) {
        const { bytesRead } = await reader.read(buffer, got, want - got, position + got);
        if (bytesRead === 0) break; // the file shrank under us: what was read is all there is
        got += bytesRead;
      }
      return got === want ? buffer : buffer.subarray(0, got);
    },
    close: () => reader.close(),
  };
}

/**
 * Opens `input` and runs `use` on it, closing what was opened here. A ByteSource given in is
 * the caller's: it is used, not closed.
 */
export async function withSource<T>(input: SourceInput, use: (source: ByteSource) => Promise<T>): Promise<T> {
  if (isByteSource(input)) return use(input);
  const source = input instanceof Uint8Array ? bytesSource(input) : await fileSource(await open(input.path, 'r'));
  try {
    return await use(source);
  } finally {
    await source.close();
  }
}

/** The whole of a source, for the kinds of document read whole (bounded by their own byte budgets). */
export const readAll = (source: ByteSource): Promise<Uint8Array> => source.read(0, source.size);
