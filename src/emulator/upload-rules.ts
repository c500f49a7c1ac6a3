import type { Readable } from 'node:stream';
import { API_PREFIX, type ExtractStoredRequest, type ParserConfig } from '../contract/index.ts';
import { mediaTypeEssence } from '../mime/detect.ts';
import { GatewayError } from './errors.ts';
import type { UploadRow } from './uploads.ts';

/** A signed PUT as the storage route decoded it. */
export type UploadPut = {
  storagePath: string;
  method: string;
  contentType: string | undefined;
  query: Partial<Record<string, unknown>>;
  /** Whether the request carries an Authorization header: signed-URL storage refuses a second credential. */
  authorized: boolean;
  body: Readable;
};

/** An upload that has its bytes: what extractStored submits. */
export type UploadedRow = UploadRow & { size: number; sha256: string };

// The validators of operations 2 and 3b, in the order the service applies them: each throws the
// GatewayError a client sees, with what to do next.

/** Signed-URL storage refuses a second credential (and an API key must never reach storage). */
export function refuseAuthorization(authorized: boolean): void {
  if (authorized) {
    throw new GatewayError(
      'invalid_request',
      'the upload address is signed and takes no Authorization header (signed-URL storage refuses two credentials): send the PUT without it, and never send your API key to storage',
    );
  }
}

export function issued(row: UploadRow | undefined): UploadRow {
  if (!row) {
    throw new GatewayError(
      'upload_forbidden',
      'no upload address was issued for this storage path: request one with POST /api/v1/upload-url',
    );
  }
  return row;
}

export function checkMethod(method: string): void {
  if (method !== 'PUT') {
    throw new GatewayError('upload_forbidden', `the upload address is signed for PUT only, not ${method}`);
  }
}

export function checkContentType(contentType: string | undefined, declared: string): void {
  const sent = mediaTypeEssence(contentType);
  if (sent !== declared) {
    throw new GatewayError(
      'upload_forbidden',
      `Content-Type "${sent || '(none)'}" does not match the file_type "${declared}" declared for this upload address: send Content-Type: ${declared}`,
    );
  }
}

/** A submitted object is immutable, and so is one being submitted (frozen). */
export function checkWritable(row: UploadRow, frozen: boolean): void {
  if (row.document_id || frozen) {
    throw new GatewayError(
      'conflict',
      `this storage path was already submitted${row.document_id ? ` as ${row.document_id}` : ''}; its object cannot change now`,
    );
  }
}

/** An upload of this parser, not yet submitted, with its bytes, of the size the request says. */
export function submittable(row: UploadRow | undefined, parser: ParserConfig, req: ExtractStoredRequest): UploadedRow {
  if (!row || row.parser_id !== parser.parser_id) {
    throw new GatewayError(
      'not_found',
      "no upload exists at this storage_path for this API key's parser: pass storage_path exactly as POST /api/v1/upload-url returned it",
    );
  }
  if (row.document_id) {
    throw new GatewayError(
      'conflict',
      `this storage_path was already submitted as document ${row.document_id}: poll GET ${API_PREFIX}/documents/${row.document_id}`,
    );
  }
  if (row.uploaded_at === null || row.size === null || row.sha256 === null) {
    throw new GatewayError(
      'upload_missing',
      'nothing was uploaded to this storage_path yet: PUT the bytes to upload_url first',
    );
  }
  if (req.file_size !== undefined && req.file_size !== row.size) {
    throw new GatewayError(
      'invalid_request',
      `file_size ${req.file_size} does not match the ${row.size} bytes uploaded: upload the whole file again`,
    );
  }
  return { ...row, size: row.size, sha256: row.sha256 };
}

export function checkNotEmpty(bytes: Buffer): void {
  if (bytes.length === 0)
    throw new GatewayError('unreadable_document', 'the file is empty (0 bytes): check the file and submit it again');
}
