import type { FieldDefinition, Results } from '../contract/index.ts';

/** What the engine reads. The emulator hands it the stored bytes and the declared or detected MIME type. */
export type EngineInput = { bytes: Uint8Array; mimeType: string; fields: FieldDefinition };
/** Where a value stands: its page (from 1) and box [x0, top, x1, bottom] in PDF points, origin top left. */
export type Place = { page: number; box: [number, number, number, number] };
/** Where each grounded leaf was found, by path ("total", "vendor.name", "line_items[0].amount"). */
export type Grounding = Record<string, Place>;
/** Results, and beside them where each non-null value was found (kept by the emulator, never in the API's results). */
export type EngineOutput = { pageCount: number; results: Results; grounding: Grounding };

export type EngineErrorCode =
  /** Not a kind of document the engine reads (say which types it does). */
  | 'unsupported_type'
  /** The bytes claim a type but cannot be read as it (a truncated or damaged PDF). */
  | 'corrupt'
  /** A password-protected PDF. */
  | 'encrypted'
  /** Zero bytes. */
  | 'empty';

export class EngineError extends Error {
  readonly code: EngineErrorCode;
  constructor(code: EngineErrorCode, message: string) {
    super(message);
    this.name = 'EngineError';
    this.code = code;
  }
}

export interface Engine {
  /** The real page count, cheap enough to run before credits are reserved. */
  countPages(bytes: Uint8Array, mimeType: string): Promise<number>;
  /** Page count and results mirroring `fields` exactly; throws EngineError for unreadable input. */
  extract(input: EngineInput): Promise<EngineOutput>;
  close(): Promise<void>;
}
