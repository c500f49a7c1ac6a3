import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { startServer, type RunningServer, type ServeOptions } from '../../src/emulator/server.ts';
import { EnginePool } from '../../src/engine/index.ts';
import type { Engine } from '../../src/engine/types.ts';
import type { EmulatorConfigInput } from '../../src/contract/index.ts';

/**
 * One engine (serve's pool of reader processes, which stay warm once started) for the emulators of
 * a file's tests, in place of one each: each started a Node process and loaded pdfjs, most of a
 * short test's CPU. Shared only at the default memory limit; a test that asks for another one gets
 * its own pool. One process, not serve's two: the suite runs three files at once on two cores, so a
 * second process per file reads nothing sooner, and its start costs 0.3-0.4 CPU-seconds (the
 * pool's rules for two are tested on pools of their own). It runs the bundle's worker when dist/
 * is current (builtEngineWorker). The engine a server is given reads through whichever pool is
 * current: after a test that left work in one (a bomb, a document its server dropped), the next
 * test's servers get the next pool, as a fresh `serve` would. Held by the file-scoped fixture
 * `engines` of ./fixtures.ts, which drops it when the file is done.
 */
export type SharedEngine = {
  /** The engine to give a server: it reads through the current pool, started at its first call. */
  engine: Engine;
  /** Whether work is still in the current pool. */
  busy(): boolean;
  /** Closes the current pool; the next call starts another. */
  drop(): Promise<void>;
};

export function shareEngine(): SharedEngine {
  let shared: { pool: EnginePool; busy: number } | undefined;
  const onPool = async <T>(call: (pool: EnginePool) => Promise<T>): Promise<T> => {
    shared ??= { pool: testEnginePool(), busy: 0 };
    const s = shared;
    s.busy++;
    try {
      return await call(s.pool);
    } finally {
      s.busy--;
    }
  };
  return {
    engine: {
      countPages: (bytes, mimeType, options) => onPool((pool) => pool.countPages(bytes, mimeType, options)),
      extract: (input, options) => onPool((pool) => pool.extract(input, options)),
      // A server never closes an engine it was given; drop() closes the pool.
      close: async () => {},
    },
    busy: () => shared !== undefined && shared.busy > 0,
    async drop() {
      const s = shared;
      shared = undefined;
      await s?.pool.close();
    },
  };
}

/** An engine as the tests' emulators have it (see above): one process, the bundle's worker when current. */
export function testEnginePool(): EnginePool {
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

export type StartEmulator = (
  overrides?: Partial<EmulatorConfigInput>,
  options?: Omit<ServeOptions, 'config' | 'port' | 'host'>,
) => Promise<RunningServer>;

/**
 * A fresh emulator on 127.0.0.1 port 0 with its own in-memory data, reading through `engine()`
 * unless the test brings an engine or another memory limit (then one of its own). Tests get it as
 * the `emulator` fixture (./fixtures.ts), which closes what it started.
 */
export async function startEmulator(
  engine: () => Engine,
  overrides: Partial<EmulatorConfigInput> = {},
  options: Omit<ServeOptions, 'config' | 'port' | 'host'> = {},
): Promise<RunningServer> {
  const config = { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 2 }, ...overrides };
  const ownEngine =
    options.engine !== undefined || resolveConfig(config).processing.engine_memory_mb !== DEFAULT_MEMORY_MB;
  return startServer({
    config,
    host: '127.0.0.1',
    port: 0,
    inMemory: options.dataDir === undefined,
    log: () => {},
    ...(!ownEngine && { engine: engine() }),
    ...options,
  });
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
