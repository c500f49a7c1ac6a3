import { statfsSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DocumentBody } from '../../src/contract/index.ts';
import { MAX_ENGINE_FILE_BYTES } from '../../src/contract/constants.ts';
import { resolveConfig } from '../../src/emulator/config.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { IMAGE_MAX_BYTES } from '../../src/engine/extract.ts';
import { extract } from '../e2e/batch-helpers.ts';
import { writeBigPdf } from '../helpers/big-pdf.ts';
import { type SpawnServe, tempDir, writeJson } from '../helpers/cli.ts';
import { call } from '../helpers/emulator.ts';
import { it } from '../helpers/fixtures.ts';
import { exactLedger } from '../helpers/hostile.ts';

/**
 * Files over the spec's 300 MB boundary go by upload-and-poll, which has no size
 * ceiling. A 1 GB, 2,000-page PDF is written by streaming, sent by the real CLI to a real
 * `extract serve`, and is counted, charged, extracted; a large image ends as an error document,
 * refunded, never a 422. Serve's peak memory meanwhile (the file is never held) is bench row
 * "15 big rss" (bench/rows/bounds.ts), measured there rather than asserted here.
 */

const CREDITS = 10_000;

async function startServe(spawnServe: SpawnServe, dir: string) {
  const config = writeJson(dir, 'config.json', {
    ...DEFAULT_CONFIG,
    credits: CREDITS,
    processing: { ms_per_page: 0, concurrency: 1 },
  });
  return spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--no-listen']);
}

/**
 * Where the big files go: a RAM disk (/dev/shm) when it has room for them and serve's copy,
 * else the temp folder: on this kind of machine writing ~2.5 GB to the virtual disk took half the file's minute.
 */
function bigFilesParent(): string {
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.bavail * fs.bsize > 4 * 1024 ** 3) return '/dev/shm';
  } catch {
    // no /dev/shm here
  }
  return tmpdir();
}

type RunRecord = { document_id: string; status: string; page_count: number | null; results: unknown; error: unknown };

/**
 * Upload-and-poll, polled at most a second apart: the client's backoff grows its polls to 19 s by
 * the end of a minute, which noticed the 1 GB document's completion 11 s late (the reading is
 * what is in question, not the backoff).
 */
const UPLOAD_POLLED = ['--route', 'upload', '--poll-interval', '500ms', '--poll-max-interval', '1s'];

describe('big files: upload-and-poll has no size ceiling', () => {
  it('the rehearsal limit defaults above the spec’s 300 MB boundary', () => {
    expect(resolveConfig(DEFAULT_CONFIG).processing.max_file_bytes).toBe(MAX_ENGINE_FILE_BYTES);
    expect(MAX_ENGINE_FILE_BYTES).toBeGreaterThan(300_000_000);
  });

  it('a 1 GB, 2,000-page PDF through upload-and-poll: counted, charged 2,000 credits, extracted', async ({
    spawnServe,
  }) => {
    const dir = tempDir('extract-big-', bigFilesParent());
    const pdf = await writeBigPdf(join(dir, 'big.pdf'), { pages: 2000, imageBytes: 524_000 });
    expect(pdf.size).toBeGreaterThan(1_000_000_000);
    const serve = await startServe(spawnServe, dir);
    const run = await extract(dir, serve.url, ['big.pdf', ...UPLOAD_POLLED]);
    expect(run.exitCode, `${run.stderr}`).toBe(0);
    const record = JSON.parse(String(run.stdout).trim().split('\n')[0]!) as RunRecord;
    expect(record).toMatchObject({ status: 'completed', page_count: 2000, error: null });
    expect(record.results).toMatchObject({
      invoice_number: 'INV-BIG-0001',
      invoice_date: '2024-03-15',
      due_date: '2024-04-15',
      total: 4321,
    });
    const doc = DocumentBody.parse((await call(serve, 'GET', `/api/v1/documents/${record.document_id}`)).body);
    expect(doc).toMatchObject({ status: 'completed', page_count: 2000 });
    const ledger = await exactLedger(serve, CREDITS);
    expect(ledger).toMatchObject({ balance: CREDITS - 2000, sum: CREDITS - 2000, negative: 0 });
    expect(ledger.entries.map((e) => [e.kind, e.pages])).toEqual([['reserve', 2000]]);
  }, 600_000);

  it('a 300 MB TIFF (over the engine’s whole-image budget) is counted from its headers, charged, then an error document, refunded: no 422', async ({
    spawnServe,
  }) => {
    const dir = tempDir('extract-big-', bigFilesParent());
    // One page, 12000 × 12000 grey, its strip a hole in a sparse file: 300 MB on the wire, nothing on disk.
    const tiff = join(dir, 'scan.tiff');
    const entries: Array<[number, number, number]> = [
      [256, 4, 12_000], // width
      [257, 4, 12_000], // height
      [258, 3, 8], // bits per sample
      [259, 3, 1], // no compression
      [262, 3, 1], // black is zero
      [273, 4, 4096], // strip offset
      [277, 3, 1], // samples per pixel
      [278, 4, 12_000], // rows per strip
      [279, 4, 144_000_000], // strip bytes
    ];
    const head = Buffer.alloc(8 + 2 + entries.length * 12 + 4);
    head.write('II*\0', 0, 'latin1');
    head.writeUInt32LE(8, 4);
    head.writeUInt16LE(entries.length, 8);
    entries.forEach(([tag, type, value], i) => {
      const at = 10 + i * 12;
      head.writeUInt16LE(tag, at);
      head.writeUInt16LE(type, at + 2);
      head.writeUInt32LE(1, at + 4);
      if (type === 3) head.writeUInt16LE(value, at + 8);
      else head.writeUInt32LE(value, at + 8);
    });
    writeFileSync(tiff, head);
    truncateSync(tiff, 300_000_000);
    expect(300_000_000).toBeGreaterThan(IMAGE_MAX_BYTES);
    const serve = await startServe(spawnServe, dir);
    const run = await extract(dir, serve.url, ['scan.tiff', ...UPLOAD_POLLED]);
    const record = JSON.parse(String(run.stdout).trim().split('\n')[0]!) as RunRecord;
    expect(record).toMatchObject({ status: 'error', page_count: 1 });
    expect(String(record.error)).toContain(`the engine reads images up to ${IMAGE_MAX_BYTES} bytes whole`);
    const ledger = await exactLedger(serve, CREDITS);
    expect(ledger).toMatchObject({ balance: CREDITS, sum: CREDITS, negative: 0 });
    expect(ledger.entries.map((e) => [e.kind, e.pages])).toEqual([
      ['reserve', 1],
      ['refund', 1],
    ]);
  }, 300_000);
});
