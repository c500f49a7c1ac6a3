import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import type { Readable } from 'node:stream';
import { GatewayError } from './errors.ts';
import { stageStream, unstage } from './staging.ts';

/**
 * Stored objects behind upload tickets. The storage path is what the client sees
 * (`<parser_id>/<upload id>/<sanitised file name>`); the bytes live in the blobs folder
 * under the upload id alone, so no file name can reach outside the data directory.
 */
export type UploadRow = {
  storage_path: string;
  parser_id: string;
  file_name: string;
  file_type: string;
  blob: string;
  expires_at: number;
  size: number | null;
  sha256: string | null;
  uploaded_at: number | null;
  document_id: string | null;
};

export type Uploads = {
  create(input: { parser_id: string; file_name: string; file_type: string; expires_at: number }): UploadRow;
  get(storagePath: string): UploadRow | undefined;
  /** Streams the body to a partial file, then renames it into place: a broken PUT leaves no object. */
  write(row: UploadRow, body: Readable, atMs: number): Promise<{ size: number; sha256: string }>;
  /** Marks the object as submitted; from then on it is immutable. */
  markSubmitted(storagePath: string, documentId: string): void;
  /**
   * Freezes the object while a submission counts its pages: a PUT that lands meanwhile is a
   * 409, so the bytes counted and charged are the bytes extracted. Returns the release.
   */
  freeze(storagePath: string): () => void;
  /** Whether a submission of this storage path is in progress. */
  isFrozen(storagePath: string): boolean;
};

/** A file name as it may appear in a storage path: one segment, printable, no dot-dot, not empty. */
function sanitiseFileName(name: string): string {
  const last = basename(name.replaceAll('\\', '/'));
  const cleaned = last
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .replace(/[^\p{L}\p{N}._ -]/gu, '_')
    .replace(/^[.\s]+/, '')
    .trim()
    .slice(0, 200);
  return cleaned === '' ? 'file' : cleaned;
}

export function createUploads(db: DatabaseSync, dirs: { blobDir: string; partialDir: string }): Uploads {
  const insert = db.prepare(
    `INSERT INTO uploads (storage_path, parser_id, file_name, file_type, blob, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const byPath = db.prepare('SELECT * FROM uploads WHERE storage_path = ?');
  const written = db.prepare(
    'UPDATE uploads SET size = ?, sha256 = ?, uploaded_at = ? WHERE storage_path = ? AND document_id IS NULL',
  );
  const submitted = db.prepare('UPDATE uploads SET document_id = ? WHERE storage_path = ? AND document_id IS NULL');
  // Submissions in progress (one process owns the data directory, so memory is enough).
  const frozen = new Set<string>();

  return {
    create({ parser_id, file_name, file_type, expires_at }) {
      const id = `upl_${randomBytes(12).toString('hex')}`;
      const storage_path = `${parser_id}/${id}/${sanitiseFileName(file_name)}`;
      insert.run(storage_path, parser_id, file_name, file_type, id, expires_at);
      return {
        storage_path,
        parser_id,
        file_name,
        file_type,
        blob: id,
        expires_at,
        size: null,
        sha256: null,
        uploaded_at: null,
        document_id: null,
      };
    },
    get(storagePath) {
      return byPath.get(storagePath) as UploadRow | undefined;
    },
    async write(row, body, atMs) {
      // Streamed and hashed as every arriving file is (staging.ts); a broken PUT leaves nothing.
      const staged = await stageStream(dirs.partialDir, body);
      // Checked again after the bytes arrived, since a submission may have landed meanwhile;
      // the check, the rename and the update run without yielding, so nothing slips between.
      const current = byPath.get(row.storage_path) as UploadRow | undefined;
      if (current?.document_id || frozen.has(row.storage_path)) {
        await unstage(staged);
        throw new GatewayError(
          'conflict',
          'this storage path was already submitted for extraction; its object cannot change now',
        );
      }
      renameSync(staged.path, join(dirs.blobDir, row.blob));
      written.run(staged.size, staged.sha256, atMs, row.storage_path);
      return { size: staged.size, sha256: staged.sha256 };
    },
    freeze(storagePath) {
      if (frozen.has(storagePath))
        throw new GatewayError(
          'conflict',
          'this storage path is being submitted by another request: poll the document that request returns',
        );
      frozen.add(storagePath);
      return () => frozen.delete(storagePath);
    },
    isFrozen(storagePath) {
      return frozen.has(storagePath);
    },
    markSubmitted(storagePath, documentId) {
      if (submitted.run(documentId, storagePath).changes !== 1) {
        throw new GatewayError('conflict', 'this storage path was already submitted for extraction');
      }
    },
  };
}
