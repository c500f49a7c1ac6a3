import { PassThrough } from 'node:stream';
import type { WebhookPayload } from '../../src/contract/index.ts';
import { startReceiver } from '../../src/receiver/index.ts';
import type { ReceiverOptions, RunningReceiver } from '../../src/receiver/index.ts';
import { tempDir } from '../helpers/cli.ts';
import { it as withServers } from '../helpers/fixtures.ts';

/** A document.processed payload as the service sends it (spec, "Events", "Payload"). */
export function payload(overrides: Partial<WebhookPayload> = {}): WebhookPayload {
  return {
    event: 'document.processed',
    parser_id: 'prs_invoices',
    parser_name: 'Invoices',
    document_id: 'doc_1',
    timestamp: '2024-03-15T10:20:30.123Z',
    data: { invoice_number: 'INV-00001', total: 101.5, lines: [{ description: 'Widget', amount: 101.5 }] },
    metadata: { file_name: 'invoice-1.pdf', mime_type: 'application/pdf', source_type: 'api', page_count: 2 },
    ...overrides,
  };
}

export type TestReceiver = RunningReceiver & {
  lines: string[];
  stdout: () => string;
  dataDir: string;
  /** Resolves with the first logged line that matches, waiting for it up to `timeoutMs`. */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
};

export type StartReceiver = (options?: Partial<ReceiverOptions>) => Promise<TestReceiver>;

/**
 * The tests' `it` with a `receiver` fixture beside test/helpers/fixtures.ts's servers: receivers
 * on 127.0.0.1 port 0, each with its own data directory (unless given), closed after the test.
 */
export const it = withServers.extend<{ receiver: StartReceiver }>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  receiver: async ({}, use) => {
    const running = new Set<RunningReceiver>();
    await use((options) => startReceiverIn(running, options));
    await Promise.all([...running].map((r) => r.close()));
  },
});

async function startReceiverIn(
  running: Set<RunningReceiver>,
  options: Partial<ReceiverOptions> = {},
): Promise<TestReceiver> {
  const lines: string[] = [];
  const waiters = new Set<(line: string) => void>();
  const log = (line: string): void => {
    lines.push(line);
    for (const w of waiters) w(line);
  };
  const out = new PassThrough();
  let printed = '';
  out.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const dataDir = options.dataDir ?? tempDir('extract-listen-');
  const r = await startReceiver({ auth: { type: 'none' }, port: 0, log, ...options, dataDir }, { stdout: out });
  running.add(r);
  const waitForLine = (pattern: RegExp, timeoutMs = 45_000): Promise<string> => {
    const seen = lines.find((l) => pattern.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`the receiver did not log ${pattern} within ${timeoutMs} ms:\n${lines.join('\n')}`));
      }, timeoutMs);
      const check = (line: string): void => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(line);
      };
      waiters.add(check);
    });
  };
  return Object.assign(r, { lines, stdout: () => printed, dataDir, waitForLine });
}

export type Sent = { status: number; body: unknown; headers: Headers };

export async function send(
  url: string,
  body: unknown,
  init: { method?: string; authorization?: string; raw?: string | Uint8Array; contentType?: string } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { 'content-type': init.contentType ?? 'application/json' };
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  const method = init.method ?? 'POST';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const res = await fetch(url, { method, headers, body: hasBody ? (init.raw ?? JSON.stringify(body)) : undefined });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: the test asserts on the text */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
