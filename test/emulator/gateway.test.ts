import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ExtractStoredRequest } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { parseConfig } from '../../src/emulator/config.ts';
import { Cleanup } from '../../src/emulator/cleanup.ts';
import { createDocuments } from '../../src/emulator/documents.ts';
import { Gateway } from '../../src/emulator/gateway.ts';
import type { UploadPut } from '../../src/emulator/upload-rules.ts';
import { createLedger } from '../../src/emulator/ledger.ts';
import { createPageCounter } from '../../src/emulator/pages.ts';
import type { Processor } from '../../src/emulator/processor.ts';
import { profileOf } from '../../src/emulator/profile.ts';
import { openStore } from '../../src/emulator/store.ts';
import { createSigner } from '../../src/emulator/tickets.ts';
import { createUploads } from '../../src/emulator/uploads.ts';
import type { Engine } from '../../src/engine/types.ts';

/**
 * The gateway's rules for uploads in process, on an injected clock: no HTTP, no engine (these
 * operations never read a document). The HTTP layer's own tests are api.test.ts and
 * hostile-uploads.test.ts.
 */

function gatewayAt(nowMs: { value: number }, parts: { engine?: Engine; processor?: Processor } = {}) {
  const config = parseConfig(DEFAULT_CONFIG);
  const store = openStore({ inMemory: true });
  let n = 0;
  const deps = { now: () => nowMs.value, sleep: async () => {}, newId: (prefix: string) => `${prefix}_${++n}` };
  const gateway = new Gateway({
    store,
    config,
    countPages: createPageCounter(parts.engine ?? ({} as Engine)),
    documents: createDocuments(store.db),
    uploads: createUploads(store.db, store),
    ledger: createLedger(store.db, config.credits),
    signer: createSigner(store.db),
    processor: parts.processor ?? ({} as Processor),
    deps,
    profile: profileOf(config),
    cleanup: new Cleanup({ refund: () => {}, now: deps.now }),
  });
  return { gateway, parser: config.parsers[0]!, config };
}

function putOf(uploadUrl: string, change: Partial<UploadPut> = {}): UploadPut {
  const url = new URL(uploadUrl);
  return {
    storagePath: decodeURIComponent(url.pathname.slice('/_storage/'.length)),
    method: 'PUT',
    contentType: 'application/pdf',
    query: Object.fromEntries(url.searchParams),
    authorized: false,
    body: Readable.from([Buffer.from('%PDF-1.7\n')]),
    ...change,
  };
}

describe('gateway: uploads', () => {
  it('gateway: a signed PUT is refused, in this order, with an Authorization header, another method, another type; then stored, and a second PUT replaces it', async () => {
    const clock = { value: 1_000_000 };
    const { gateway, parser } = gatewayAt(clock);
    const ticket = gateway.issueTicket(
      parser,
      { file_name: 'a.pdf', file_type: 'application/pdf' },
      'http://127.0.0.1:1',
    );
    const refusal = (change: Partial<UploadPut>) => gateway.receiveUpload(putOf(ticket.upload_url, change));
    // Two problems at once: the first rule the service applies answers.
    await expect(refusal({ authorized: true, method: 'POST' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(refusal({ method: 'POST', contentType: 'text/plain' })).rejects.toThrow(/signed for PUT only/);
    await expect(refusal({ contentType: 'text/plain' })).rejects.toThrow(/does not match the file_type/);
    await expect(refusal({ storagePath: 'prs_x/none.pdf' })).rejects.toThrow(/no upload address was issued/);
    expect((await refusal({})).size).toBe(9);
    // A second PUT before the path is submitted replaces the object (as a bucket does): the size
    // a submission is checked against is the second one's.
    const second = await refusal({ body: Readable.from([Buffer.from('%PDF-2.0\n%%EOF\n')]) });
    expect(second.size).toBe(15);
    await expect(gateway.extractStored(parser, { storage_path: ticket.storage_path, file_size: 9 })).rejects.toThrow(
      /file_size 9 does not match the 15 bytes uploaded/,
    );
  });

  it('gateway: an upload address expires after expires_in on the injected clock, and is valid until then', async () => {
    const clock = { value: 1_000_000 };
    const { gateway, parser, config } = gatewayAt(clock);
    const ticket = gateway.issueTicket(
      parser,
      { file_name: 'a.pdf', file_type: 'application/pdf' },
      'http://127.0.0.1:1',
    );
    // The last millisecond of its life: accepted.
    clock.value += config.upload.expires_in * 1000 - 1;
    expect((await gateway.receiveUpload(putOf(ticket.upload_url))).size).toBe(9);
    clock.value += 1000 + 1;
    await expect(gateway.receiveUpload(putOf(ticket.upload_url))).rejects.toMatchObject({ code: 'upload_forbidden' });
  });

  it("gateway: extract on a storage path refuses another parser's upload, one not uploaded yet, and a wrong file_size", async () => {
    const clock = { value: 1_000_000 };
    const { gateway, parser } = gatewayAt(clock);
    const ticket = gateway.issueTicket(
      parser,
      { file_name: 'a.pdf', file_type: 'application/pdf' },
      'http://127.0.0.1:1',
    );
    const stored = (req: Partial<ExtractStoredRequest>, p = parser) =>
      gateway.extractStored(p, { storage_path: ticket.storage_path, ...req });
    await expect(stored({}, { ...parser, parser_id: 'prs_other' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(stored({})).rejects.toMatchObject({ code: 'upload_missing' });
    await gateway.receiveUpload(putOf(ticket.upload_url));
    await expect(stored({ file_size: 10 })).rejects.toThrow(/file_size 10 does not match the 9 bytes uploaded/);
  });
});

describe('gateway: extraction', () => {
  it("gateway: extractInline takes (parser, request, injected error, record), extractStored's order, and hands the processor both", async () => {
    const injected: Array<string | undefined> = [];
    const processor = {
      run: async (
        _doc: unknown,
        options: { injectedError?: unknown; onCompleted?: (results: Record<string, never>) => void },
      ) => {
        const { injectedError, onCompleted } = options;
        injected.push(typeof injectedError === 'string' ? injectedError : typeof injectedError);
        onCompleted?.({});
        return { status: 'completed', pageCount: 1, results: {} };
      },
    } as unknown as Processor;
    const engine = { countPages: async () => 1 } as unknown as Engine;
    const { gateway, parser } = gatewayAt({ value: 1_000_000 }, { engine, processor });
    const request = {
      file: { name: 'a.pdf', type: 'application/pdf', data: Buffer.from('%PDF-1.7\n').toString('base64') },
    };
    const recorded: unknown[] = [];
    const answer = await gateway.extractInline(parser, request, 'boom', (a) => recorded.push(a));
    expect(injected).toEqual(['boom']);
    expect(recorded).toEqual([answer]);
  });
});
