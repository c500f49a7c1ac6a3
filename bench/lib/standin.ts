import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  DocumentBody,
  ExtractAcceptedResponse,
  ExtractInlineResponse,
  UploadTicket,
} from '../../src/contract/index.ts';

/**
 * The stand-in: a bare node:http server that answers the service's API at once with canned,
 * valid bodies, so that what a benchmark measures is the client. It parses no more than it
 * must: an inline extract is read and dropped; a storage-path extract is told apart by its key.
 */

export const STANDIN_KEY = 'ext_bench_standin_key_0001';

/** A result as the emulator's Invoices parser returns it: every field present, nulls kept. */
const RESULTS = {
  invoice_number: 'INV-00001',
  invoice_date: '2024-03-15',
  due_date: null,
  purchase_order: null,
  vendor: { name: 'Acme', address: null, email: null, phone: null },
  bill_to: { name: null, address: null },
  currency: 'USD',
  subtotal: null,
  tax: null,
  total: 101,
  paid: null,
  line_items: [],
};

export type StandInCounts = {
  inline: number;
  stored: number;
  uploadUrl: number;
  put: number;
  get: number;
  other: number;
};

export type StandInOptions = {
  /** A fixed service latency: how long an inline extract takes to answer; 0 answers at once. */
  inlineMs?: number;
  /** How long a storage-path document stays processing, from its acceptance; 0 completes at once. */
  processingMs?: (fileName: string) => number;
};

export type StandIn = {
  url: string;
  counts: StandInCounts;
  /** GETs answered per document id (storage-path documents). */
  getsByDocument: Map<string, number>;
  fileNameOf: Map<string, string>;
  /** Each PUT: bytes received and the seconds from its first byte to its last. */
  puts: Array<{ bytes: number; seconds: number }>;
  reset: () => void;
  close: () => Promise<void>;
};

export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const counts: StandInCounts = { inline: 0, stored: 0, uploadUrl: 0, put: 0, get: 0, other: 0 };
  const getsByDocument = new Map<string, number>();
  const fileNameOf = new Map<string, string>();
  const readyAt = new Map<string, number>();
  const uploads = new Map<string, string>();
  const puts: Array<{ bytes: number; seconds: number }> = [];
  let seq = 0;
  let base = '';
  const nextId = (): string => `doc_${(++seq).toString(16).padStart(24, '0')}`;
  const inlineAnswer = (id: string): string =>
    JSON.stringify({
      success: true,
      parser_id: 'prs_bench',
      document_id: id,
      results: RESULTS,
    } satisfies ExtractInlineResponse);

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'POST' && url === '/api/v1/extract') {
      void readText(req).then((body) => {
        const id = nextId();
        if (!body.includes('"storage_path"')) {
          counts.inline++;
          if (options.inlineMs) return void setTimeout(() => send(res, 200, inlineAnswer(id)), options.inlineMs);
          return send(res, 200, inlineAnswer(id));
        }
        counts.stored++;
        const path = /"storage_path":"([^"]+)"/.exec(body)?.[1] ?? '';
        const fileName = uploads.get(path) ?? path;
        fileNameOf.set(id, fileName);
        readyAt.set(id, performance.now() + (options.processingMs?.(fileName) ?? 0));
        getsByDocument.set(id, 0);
        send(
          res,
          200,
          JSON.stringify({
            success: true,
            document_id: id,
            status: 'processing',
            poll_url: `/api/v1/documents/${id}`,
          } satisfies ExtractAcceptedResponse),
        );
      });
      return;
    }
    if (req.method === 'GET' && url.startsWith('/api/v1/documents/')) {
      counts.get++;
      const id = url.slice('/api/v1/documents/'.length);
      const gets = getsByDocument.get(id);
      if (gets !== undefined) getsByDocument.set(id, gets + 1);
      const done = (readyAt.get(id) ?? 0) <= performance.now();
      const doc: DocumentBody = {
        document_id: id,
        status: done ? 'completed' : 'processing',
        file_name: fileNameOf.get(id) ?? 'file.pdf',
        page_count: 1,
        results: done ? RESULTS : null,
        error: null,
      };
      return send(res, 200, JSON.stringify(doc));
    }
    if (req.method === 'POST' && url === '/api/v1/upload-url') {
      void readText(req).then((body) => {
        counts.uploadUrl++;
        const name = /"file_name":"([^"]+)"/.exec(body)?.[1] ?? 'file';
        const path = `bench/${++seq}/${name}`;
        uploads.set(path, name);
        send(
          res,
          200,
          JSON.stringify({
            upload_url: `${base}/_put/${path}?sig=x`,
            storage_path: path,
            expires_in: 900,
          } satisfies UploadTicket),
        );
      });
      return;
    }
    if (req.method === 'PUT' && url.startsWith('/_put/')) {
      counts.put++;
      let bytes = 0;
      let first = 0;
      req.on('data', (chunk: Buffer) => {
        if (bytes === 0) first = performance.now();
        bytes += chunk.length;
      });
      req.on('end', () => {
        puts.push({ bytes, seconds: (performance.now() - first) / 1000 });
        send(res, 200, '');
      });
      return;
    }
    counts.other++;
    req.resume();
    send(res, 404, JSON.stringify({ success: false, error: 'not found', code: 'not_found' }));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    counts,
    getsByDocument,
    fileNameOf,
    puts,
    reset() {
      for (const k of Object.keys(counts) as Array<keyof StandInCounts>) counts[k] = 0;
      getsByDocument.clear();
      puts.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
