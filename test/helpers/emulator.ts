import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../src/emulator/server.ts';
import { EnginePool } from '../../src/engine/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import type { EmulatorConfigInput } from '../../src/contract/index.ts';
import { afterEachFile, afterEachTest, inTest } from './cleanup.ts';

/**
 * Emulators made in a test, closed after it; made outside one (beforeAll), closed after the file,
 * each with an engine of its own (closed after it), as a `serve` of the file's would have: work a
 * test leaves in it goes on, and the shared engine's drop below does not end it.
 */
const running = new Set<RunningServer>();
const forFile = new Set<{ server: RunningServer; engine: EnginePool | undefined }>();
afterEachTest(async () => {
  await Promise.all([...running].map((s) => s.close()));
  running.clear();
  // Work still in the engine is the finished test's (a bomb, a document its server dropped): the
  // next test gets an engine of its own, as a fresh `serve` would.
  if (shared !== undefined && shared.busy > 0) await dropSharedEngine();
});
afterEachFile(async () => {
  await Promise.all(
    [...forFile].map(async ({ server, engine }) => {
      await server.close();
      await engine?.close();
    }),
  );
  forFile.clear();
  await dropSharedEngine();
});

/**
 * One engine (serve's pool of reader processes, which stay warm once started) for the emulators of
 * a file's tests, in place of one each: each started a Node process and loaded pdfjs, most of a
 * short test's CPU. Shared only at the default memory limit; a test that asks for another one gets
 * its own pool. One process, not serve's two: the suite runs three files at once on two cores, so a
 * second process per file reads nothing sooner, and its start costs 0.3-0.4 CPU-seconds (the
 * pool's rules for two are tested on pools of their own). It runs the bundle's worker when dist/
 * is current (builtEngineWorker). The engine a server is given reads through whichever pool is
 * current: after a test that left work in one, the next test's servers get the next pool.
 */
let shared: { pool: EnginePool; busy: number } | undefined;

async function onSharedPool<T>(call: (pool: EnginePool) => Promise<T>): Promise<T> {
  shared ??= { pool: testEnginePool(), busy: 0 };
  const s = shared;
  s.busy++;
  try {
    return await call(s.pool);
  } finally {
    s.busy--;
  }
}

const SHARED_ENGINE: Engine = {
  countPages: (bytes, mimeType, options) => onSharedPool((pool) => pool.countPages(bytes, mimeType, options)),
  extract: (input, options) => onSharedPool((pool) => pool.extract(input, options)),
  // A server never closes an engine it was given; the clean-up above closes the pool.
  close: async () => {},
};

export function sharedEngine(): Engine {
  return SHARED_ENGINE;
}

/** An engine as the tests' emulators have it (see above): one process, the bundle's worker when current. */
function testEnginePool(): EnginePool {
  const worker = builtEngineWorker();
  return new EnginePool({ workers: 1, memoryMb: DEFAULT_MEMORY_MB, ...(worker !== undefined && { worker }) });
}

/**
 * dist/engine/worker.js when `npm run build` made it after the last change to src/ (npm test builds
 * first), else undefined: the worker from src/ then. An engine process of the bundle starts on
 * 0.3-0.4 CPU-seconds, one of src/ on 0.7-0.9 (Node strips the types of some hundred files and
 * resolves each); what it reads, and how, is the same code. Decided once per worker.
 */
let built: string | undefined | null = null;
function builtEngineWorker(): string | undefined {
  if (built !== null) return built;
  const root = join(import.meta.dirname, '..', '..');
  const worker = join(root, 'dist', 'engine', 'worker.js');
  const changedAt = (dir: string): number =>
    Math.max(
      statSync(dir).mtimeMs,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? changedAt(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  try {
    built = changedAt(join(root, 'src')) <= statSync(worker).mtimeMs ? worker : undefined;
  } catch {
    // No build, or a file went away while it was read (an editor's temporary file): src/'s worker.
    built = undefined;
  }
  return built;
}

async function dropSharedEngine(): Promise<void> {
  const s = shared;
  shared = undefined;
  await s?.pool.close();
}

const DEFAULT_MEMORY_MB = resolveConfig(DEFAULT_CONFIG).processing.engine_memory_mb;

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

/**
 * A fresh emulator on 127.0.0.1 port 0 with its own in-memory data, closed after the test (made
 * outside a test, after the file, with an engine of its own); its engine is the file's shared one
 * (sharedEngine) unless the test brings one or another memory limit.
 */
export async function emulator(
  overrides: Partial<EmulatorConfigInput> = {},
  options: Omit<ServeOptions, 'config' | 'port' | 'host'> = {},
): Promise<RunningServer> {
  const config = { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 2 }, ...overrides };
  const ownEngine =
    options.engine !== undefined || resolveConfig(config).processing.engine_memory_mb !== DEFAULT_MEMORY_MB;
  const forTheFile = !inTest();
  const engine = ownEngine ? undefined : forTheFile ? testEnginePool() : sharedEngine();
  const server = await startServer({
    config,
    host: '127.0.0.1',
    port: 0,
    inMemory: options.dataDir === undefined,
    log: () => {},
    ...(engine !== undefined && { engine }),
    ...options,
  });
  if (forTheFile) forFile.add({ server, engine: engine instanceof EnginePool ? engine : undefined });
  else running.add(server);
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

/** Sends a document by the upload-and-poll route, as a user's pipeline would: its document_id. */
export async function submitStored(server: { url: string }, bytes: Uint8Array, fileName: string): Promise<string> {
  const ticket = await call(server, 'POST', '/api/v1/upload-url', {
    body: { file_name: fileName, file_type: 'application/pdf' },
  });
  await call(server, 'PUT', ticket.body.upload_url, {
    raw: bytes,
    key: null,
    headers: { 'content-type': 'application/pdf' },
  });
  const accepted = await call(server, 'POST', '/api/v1/extract', { body: { storage_path: ticket.body.storage_path } });
  if (accepted.status !== 200) throw new Error(`extract answered ${accepted.status}: ${JSON.stringify(accepted.body)}`);
  return accepted.body.document_id as string;
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
