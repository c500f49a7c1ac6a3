import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { request } from 'undici';

/** The few API calls the runner itself makes (to set a benchmark up or to probe it), with undici. */

export async function postJson(url: string, key: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json: unknown = await res.body.json();
  if (res.statusCode !== 200 || typeof json !== 'object' || json === null)
    throw new Error(`POST ${url}: HTTP ${res.statusCode} ${JSON.stringify(json)}`);
  return Object.fromEntries(Object.entries(json));
}

export async function getText(url: string, key: string): Promise<{ status: number; text: string }> {
  const res = await request(url, { headers: { authorization: `Bearer ${key}`, accept: 'application/json' } });
  return { status: res.statusCode, text: await res.body.text() };
}

/** One document inline; returns its id. */
export async function extractInline(base: string, key: string, file: string): Promise<string> {
  const answer = await postJson(`${base}/api/v1/extract`, key, {
    file: { data: readFileSync(file).toString('base64'), name: basename(file), type: 'application/pdf' },
  });
  const id = answer.document_id;
  if (typeof id !== 'string') throw new Error('no document_id');
  return id;
}

/** upload-url, the PUT, extract by storage path; returns the document id (processing). */
export async function submitStored(base: string, key: string, name: string, bytes: Buffer): Promise<string> {
  const ticket = await postJson(`${base}/api/v1/upload-url`, key, { file_name: name, file_type: 'application/pdf' });
  const uploadUrl = ticket.upload_url;
  const storagePath = ticket.storage_path;
  if (typeof uploadUrl !== 'string' || typeof storagePath !== 'string') throw new Error('bad upload ticket');
  const put = await request(new URL(uploadUrl, `${base}/`).toString(), {
    method: 'PUT',
    headers: { 'content-type': 'application/pdf' },
    body: bytes,
  });
  await put.body.text();
  if (put.statusCode !== 200) throw new Error(`PUT: HTTP ${put.statusCode}`);
  const accepted = await postJson(`${base}/api/v1/extract`, key, {
    storage_path: storagePath,
    file_name: name,
    file_type: 'application/pdf',
    file_size: bytes.length,
  });
  const id = accepted.document_id;
  if (typeof id !== 'string') throw new Error('no document_id');
  return id;
}
