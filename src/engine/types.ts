import type { FieldDefinition, Results } from '../contract/index.ts';

/** A path names a field in the definition: "vendor.name", "line_items[].amount". */
export type FieldPath = string;

/** What the engine reads. The emulator hands it the stored bytes and the declared or detected MIME type. */
export type EngineInput = { bytes: Uint8Array; mimeType: string; fields: FieldDefinition };
/** Where a value stands: its page (from 1) and box [x0, top, x1, bottom] in PDF points, origin top left. */
export type Place = { page: number; box: [number, number, number, number] };
/** Where each grounded leaf was found, by path ("total", "vendor.name", "line_items[0].amount"). */
export type Grounding = Record<string, Place>;
/**
 * Results, and beside them where each non-null value was found (kept by the emulator, never in the API's results);
 * notes: why pages were not read or read as nothing (no text layer and no OCR result, OCR's budgets), when any were.
 */
export type EngineOutput = { pageCount: number; results: Results; grounding: Grounding; notes?: string[] };

export type EngineErrorCode =
  /** Not a kind of document the engine reads (say which types it does). */
  | 'unsupported_type'
  /** The bytes claim a type but cannot be read as it (a truncated or damaged PDF). */
  | 'corrupt'
  /** A password-protected PDF. */
  | 'encrypted'
  /** Zero bytes. */
  | 'empty'
  /** More bytes, or more memory to read them, than the engine takes (MAX_ENGINE_FILE_BYTES, an image or text file over its whole-read budget, the worker's heap limit). */
  | 'too_large';

/** In the message of a document refused for the memory its reading takes (the engine's limit, not a pixel or byte ceiling). */
export const NEEDS_MORE_MEMORY = 'needs more memory than the engine allows';

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}

/** The engine was closed (the server is stopping): the document was not read, through no fault of its own. */
export class EngineClosedError extends Error {
  override name = 'EngineClosedError';
}

export { MAX_ENGINE_FILE_BYTES } from '../contract/constants.ts';

/** A stored file, read by the engine's worker itself by ranges (source.ts), so no thread ever holds it whole. */
export type FileRef = { path: string };
export type EngineSource = Uint8Array | FileRef;
export type EngineJob = Omit<EngineInput, 'bytes'> & { bytes: EngineSource };
/** An aborted signal cancels the call: a queued job is dropped, a running worker is stopped. */
export type EngineCallOptions = { signal?: AbortSignal | undefined };

export interface Engine {
  /** The real page count, cheap enough to run before credits are reserved. */
  countPages(bytes: EngineSource, mimeType: string, options?: EngineCallOptions): Promise<number>;
  /** Page count and results mirroring `fields` exactly; throws EngineError for unreadable input. */
  extract(input: EngineJob, options?: EngineCallOptions): Promise<EngineOutput>;
  close(): Promise<void>;
}
