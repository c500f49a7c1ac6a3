import { Agent, request } from 'undici';

/** What a burst did: reads and uploads made, latency of each read in ms, and what went wrong. */
export type BurstResult = { reads: number; uploads: number; latencies: number[]; errors: string[] };

export type ServeLoad = {
  /** Every poller reading `readsEach` documents and every uploader sending `uploadsEach`, all at once. */
  burst(readsEach: number, uploadsEach: number): Promise<BurstResult>;
  close(): Promise<void>;
};

/**
 * Load on `extract serve` from loopback: `pollers` concurrent loops of GET documents/{id} (each
 * read compared with the document's first read) and `uploaders` concurrent loops of
 * upload-url, PUT and extract. The documents read are one inline extraction of each PDF, made
 * here first. The reliability test asserts what a burst returns; bench row group 15 measures
 * serve's memory across bursts.
 */
export async function loadServe(
  url: string,
  key: string,
  pdfs: ReadonlyArray<{ name: string; bytes: Buffer }>,
  options: { pollers: number; uploaders: number },
): Promise<ServeLoad> {
  const dispatcher = new Agent({ connections: options.pollers + options.uploaders + 10, pipelining: 1 });
  const auth = { authorization: `Bearer ${key}` };
  const json = async (
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await request(`${url}${path}`, {
      method,
      dispatcher,
      headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };
  const get = (path: string) => request(`${url}${path}`, { dispatcher, headers: auth });

  const ids = await Promise.all(
    pdfs.map(async ({ name, bytes }) => {
      const r = await json('POST', '/api/v1/extract', {
        file: { data: bytes.toString('base64'), name, type: 'application/pdf' },
      });
      if (r.status !== 200) throw new Error(`inline extraction of ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      return String(r.body.document_id);
    }),
  );
  /** Each document's body as first read: a finished document reads the same every time after. */
  const bodies = new Map<string, string>();
  for (const id of ids) {
    const first = await get(`/api/v1/documents/${id}`);
    const text = await first.body.text();
    const status = (JSON.parse(text) as { status?: string }).status;
    if (first.statusCode !== 200 || status !== 'completed')
      throw new Error(`GET ${id}: ${first.statusCode} ${text.slice(0, 200)}`);
    bodies.set(id, text);
  }

  const burst = async (readsEach: number, uploadsEach: number): Promise<BurstResult> => {
    const result: BurstResult = { reads: 0, uploads: 0, latencies: [], errors: [] };
    const poller = async (p: number): Promise<void> => {
      for (let i = 0; i < readsEach; i++) {
        const id = ids[(p + i) % ids.length]!;
        const t = performance.now();
        const r = await get(`/api/v1/documents/${id}`);
        // Compared as text with the first read: the same bytes, and cheaper than a JSON.parse a read.
        const text = await r.body.text();
        result.latencies.push(performance.now() - t);
        result.reads++;
        if (r.statusCode !== 200 || text !== bodies.get(id))
          result.errors.push(`GET ${id}: ${r.statusCode} ${text.slice(0, 200)}`);
      }
    };
    const uploader = async (u: number): Promise<void> => {
      for (let i = 0; i < uploadsEach; i++) {
        const pdf = pdfs[(u + i) % pdfs.length]!;
        const name = `load-${u}-${i}.pdf`;
        const ticket = await json('POST', '/api/v1/upload-url', { file_name: name, file_type: 'application/pdf' });
        if (ticket.status !== 200) {
          result.errors.push(`upload-url: ${ticket.status}`);
          continue;
        }
        const put = await request(String(ticket.body.upload_url), {
          method: 'PUT',
          dispatcher,
          headers: { 'content-type': 'application/pdf' },
          body: pdf.bytes,
        });
        await put.body.text();
        if (put.statusCode !== 200) result.errors.push(`PUT: ${put.statusCode}`);
        const submitted = await json('POST', '/api/v1/extract', {
          storage_path: ticket.body.storage_path,
          file_name: name,
          file_type: 'application/pdf',
          file_size: pdf.bytes.length,
        });
        if (submitted.status !== 200 || submitted.body.status !== 'processing')
          result.errors.push(`extract: ${submitted.status}`);
        result.uploads++;
      }
    };
    await Promise.all([
      ...Array.from({ length: options.pollers }, (_, p) => poller(p)),
      ...Array.from({ length: options.uploaders }, (_, u) => uploader(u)),
    ]);
    return result;
  };
  return { burst, close: () => dispatcher.close() };
}
