import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../src/emulator/server.ts';
import type { EmulatorConfigInput } from '../../src/contract/index.ts';
import { afterEachTest } from './cleanup.ts';

const running = new Set<RunningServer>();
afterEachTest(async () => {
  await Promise.all([...running].map((s) => s.close()));
  running.clear();
});

export const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;

/** The key of a second parser, for tests of what one parser's key may see of another's. */
export const OTHER_KEY = 'ext_other_parser_key_0002';
export const TWO_PARSERS = {
  parsers: [
    DEFAULT_CONFIG.parsers[0]!,
    {
      parser_id: 'prs_other',
      parser_name: 'Other',
      api_keys: [OTHER_KEY],
      fields: [{ name: 'total', type: 'decimal' as const }],
    },
  ],
};

/** A fresh emulator on 127.0.0.1 port 0 with its own in-memory data, closed after the test. */
export async function emulator(
  overrides: Partial<EmulatorConfigInput> = {},
  options: Omit<ServeOptions, 'config' | 'port' | 'host'> = {},
): Promise<RunningServer> {
  const server = await startServer({
    config: { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 2 }, ...overrides },
    host: '127.0.0.1',
    port: 0,
    inMemory: options.dataDir === undefined,
    log: () => {},
    ...options,
  });
  running.add(server);
  return server;
}

export type Reply = {
  status: number; // biome-ignore lint/suspicious/noExplicitAny: tests read any field of any reply
  body: any;
  headers: Headers;
};

/** A small HTTP helper over fetch: JSON in, JSON (or text) out. */
export async function call(
  server: { url: string },
  method: string,
  path: string,
  init: { body?: unknown; raw?: string | Uint8Array; key?: string | null; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== null) headers.authorization ??= `Bearer ${init.key ?? KEY}`;
  let body: string | Uint8Array | undefined = init.raw;
  if (init.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(path.startsWith('http') ? path : `${server.url}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: the test asserts on the text */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export async function waitForDocument(
  server: { url: string },
  id: string,
  key = KEY,
  timeoutMs = 45_000,
): Promise<Reply> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(server, 'GET', `/api/v1/documents/${id}`, { key });
    if (r.body?.status !== 'processing' || Date.now() > deadline) return r;
    await new Promise((res) => setTimeout(res, 25));
  }
}

export function inlineBody(bytes: Buffer, name = 'invoice.pdf', type = 'application/pdf') {
  return { file: { data: bytes.toString('base64'), name, type } };
}
