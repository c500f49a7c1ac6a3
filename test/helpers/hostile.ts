import { UploadTicket } from '../../src/contract/index.ts';
import { call, type Reply } from './emulator.ts';
export { pdfClaimingPages, xrefBombPdf } from './bombs.ts';

/** Hostile inputs for the reliability tests, generated on the fly (nothing big is checked in). */

/** A multipart form with the given files, as a browser's FormData would send it. */
export function formOf(files: Array<{ name: string; bytes: Buffer; type?: string }>): FormData {
  const form = new FormData();
  for (const f of files)
    form.append('file', new Blob([new Uint8Array(f.bytes)], { type: f.type ?? 'application/pdf' }), f.name);
  return form;
}

/** POSTs a form (the application's upload route, the inbound webhook) with extra headers. */
export async function postForm(url: string, form: FormData, headers: Record<string, string> = {}): Promise<Reply> {
  const res = await fetch(url, { method: 'POST', body: form, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* the test asserts on the text */
  }
  return { status: res.status, body, headers: res.headers };
}

/** upload-url then PUT: the storage path of `bytes`, ready to extract. */
export async function stored(
  server: { url: string },
  bytes: Buffer,
  name = 'file.pdf',
  type = 'application/pdf',
): Promise<UploadTicket> {
  const t = await call(server, 'POST', '/api/v1/upload-url', { body: { file_name: name, file_type: type } });
  if (t.status !== 200) throw new Error(`upload-url answered ${t.status}: ${JSON.stringify(t.body)}`);
  const ticket = UploadTicket.parse(t.body);
  const put = await call(server, 'PUT', ticket.upload_url, {
    raw: bytes,
    key: null,
    headers: { 'content-type': type },
  });
  if (put.status !== 200) throw new Error(`the PUT answered ${put.status}: ${JSON.stringify(put.body)}`);
  return ticket;
}

/** The ledger, with a check that it adds up: every entry non-negative and the balance their sum. */
export async function exactLedger(server: { url: string }, opening: number) {
  const r = await call(server, 'GET', '/_emulator/ledger', { key: null });
  if (r.status !== 200) throw new Error(`the ledger answered ${r.status}: ${JSON.stringify(r.body)}`);
  const entries = r.body.entries as Array<{ kind: string; pages: number; document_id: string | null }>;
  const sum = entries.reduce((n, e) => n + (e.kind === 'reserve' ? -e.pages : e.pages), opening);
  return { balance: r.body.balance as number, sum, negative: entries.filter((e) => e.pages < 0).length, entries };
}
