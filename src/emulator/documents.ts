import type { DatabaseSync } from 'node:sqlite';
import { API_PREFIX, Grounding as GroundingSchema, ReadingNotes as NotesSchema } from '../contract/index.ts';
import type {
  DocumentBody,
  DocumentStatus,
  ExtractAcceptedResponse,
  Grounding,
  Results,
  SourceType,
} from '../contract/index.ts';

/** Documents (spec, "Document" and "States and transitions"), as rows of the store. */
export type DocumentRow = {
  document_id: string;
  parser_id: string;
  status: DocumentStatus;
  file_name: string;
  mime_type: string;
  source_type: SourceType;
  /** inline: the client waits on the request; stored: extraction runs in the background. */
  route: 'inline' | 'stored';
  blob: string;
  size: number;
  sha256: string;
  page_count: number | null;
  results: Results | null;
  /** Where the engine found each value (page and box): the emulator's own surface shows it, the API never does. */
  grounding: Grounding | null;
  /** Why pages were not read, or read as nothing (no text layer and no OCR result...): the emulator's surface only. */
  notes: string[] | null;
  error: string | null;
  created_at: number;
  finished_at: number | null;
};

/** A document as it is accepted: what the gateway knows before extraction. */
export type NewDocument = Omit<DocumentRow, 'status' | 'results' | 'grounding' | 'notes' | 'error' | 'finished_at'>;

type RawRow = Omit<DocumentRow, 'results' | 'grounding' | 'notes'> & {
  results: string | null;
  grounding: string | null;
  notes?: string | null;
};

export type Documents = {
  insert(doc: NewDocument & { status?: DocumentStatus; error?: string | null }): void;
  get(documentId: string): DocumentRow | undefined;
  /** processing -> completed; false when the document was no longer processing (a late result is dropped). */
  complete(
    documentId: string,
    pageCount: number,
    results: Results,
    atMs: number,
    grounding?: Grounding,
    notes?: string[],
  ): boolean;
  /** processing -> error; false when it was no longer processing. */
  /** notes: why it failed, for the emulator's own surface (which limit stopped it). */
  fail(documentId: string, error: string, atMs: number, notes?: string[]): boolean;
  processing(): DocumentRow[];
  /** Counts one more start of background extraction and returns how many there were (restarts included). */
  startAttempt(documentId: string): number;
  /** Newest first, for the application's list. */
  page(input: { offset: number; limit: number; status?: DocumentStatus | undefined }): {
    total: number;
    documents: DocumentRow[];
  };
};

export function createDocuments(db: DatabaseSync): Documents {
  const insert = db.prepare(
    `INSERT INTO documents (document_id, parser_id, status, file_name, mime_type, source_type, route, blob, size, sha256, page_count, results, error, created_at, finished_at)
     VALUES (:document_id, :parser_id, :status, :file_name, :mime_type, :source_type, :route, :blob, :size, :sha256, :page_count, NULL, :error, :created_at, :finished_at)`,
  );
  const byId = db.prepare('SELECT * FROM documents WHERE document_id = ?');
  const complete = db.prepare(
    `UPDATE documents SET status = 'completed', page_count = ?, results = ?, grounding = ?, notes = ?, finished_at = ? WHERE document_id = ? AND status = 'processing'`,
  );
  const fail = db.prepare(
    `UPDATE documents SET status = 'error', error = ?, notes = ?, finished_at = ? WHERE document_id = ? AND status = 'processing'`,
  );
  const attempt = db.prepare('UPDATE documents SET attempts = attempts + 1 WHERE document_id = ? RETURNING attempts');
  const processing = db.prepare(`SELECT * FROM documents WHERE status = 'processing' ORDER BY created_at, document_id`);
  const decode = ({ attempts: _attempts, ...r }: RawRow & { attempts?: number }): DocumentRow => ({
    ...r,
    results: r.results === null ? null : (JSON.parse(r.results) as Results),
    grounding:
      r.grounding === null || r.grounding === undefined ? null : GroundingSchema.parse(JSON.parse(r.grounding)),
    notes: typeof r.notes === 'string' ? NotesSchema.parse(JSON.parse(r.notes)) : null,
  });

  return {
    insert(doc) {
      const status = doc.status ?? 'processing';
      insert.run({
        ...doc,
        status,
        error: doc.error ?? null,
        finished_at: status === 'processing' ? null : doc.created_at,
      });
    },
    get(documentId) {
      const r = byId.get(documentId) as RawRow | undefined;
      return r && decode(r);
    },
    complete(documentId, pageCount, results, atMs, grounding, notes) {
      return (
        complete.run(
          pageCount,
          JSON.stringify(results),
          grounding === undefined ? null : JSON.stringify(grounding),
          notes === undefined || notes.length === 0 ? null : JSON.stringify(notes),
          atMs,
          documentId,
        ).changes === 1
      );
    },
    fail(documentId, error, atMs, notes) {
      return (
        fail.run(error, notes === undefined || notes.length === 0 ? null : JSON.stringify(notes), atMs, documentId)
          .changes === 1
      );
    },
    processing() {
      return (processing.all() as RawRow[]).map(decode);
    },
    startAttempt(documentId) {
      const row = attempt.get(documentId) as { attempts: number } | undefined;
      return row?.attempts ?? 0;
    },
    page({ offset, limit, status }) {
      const where = status ? 'WHERE status = ?' : '';
      const args = status ? [status] : [];
      const total = (db.prepare(`SELECT COUNT(*) AS n FROM documents ${where}`).get(...args) as { n: number }).n;
      const rows = db
        .prepare(`SELECT * FROM documents ${where} ORDER BY created_at DESC, document_id DESC LIMIT ? OFFSET ?`)
        .all(...args, limit, offset) as RawRow[];
      return { total, documents: rows.map(decode) };
    },
  };
}

/** The document as operation 4 returns it. */
export function documentBody(d: DocumentRow): DocumentBody {
  return {
    document_id: d.document_id,
    status: d.status,
    file_name: d.file_name,
    page_count: d.page_count,
    results: d.status === 'completed' ? d.results : null,
    error: d.error,
  };
}

/** The answer to a document accepted for background extraction, whatever route it came by. */
export const accepted = (documentId: string): ExtractAcceptedResponse => ({
  success: true,
  document_id: documentId,
  status: 'processing',
  poll_url: `${API_PREFIX}/documents/${documentId}`,
});
