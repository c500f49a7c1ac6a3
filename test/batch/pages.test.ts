import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { LedgerBody } from '../../src/contract/index.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { grayTiff } from '../helpers/scan.ts';
import { batchOptions, invoiceDir, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * A TIFF of `pages` blank grey pages, one image file directory a page. The service charges a
 * page each; an estimate that calls every image one page is wrong.
 */
function tiff(pages: number): Buffer {
  const blank = { width: 64, height: 64, pixels: new Uint8Array(64 * 64).fill(255) };
  return grayTiff(Array.from({ length: pages }, () => blank));
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('--dry-run counts pages as the service charges them (one counter: the engine)', () => {
  it("each planned document's estimate is what the emulator then reserves for it", async ({ emulator }) => {
    const cwd = await invoiceDir(1, 3);
    writeFileSync(join(cwd, 'in', 'scan.tif'), tiff(3));
    // A PDF with bytes before its header, as some scanners write it: readers look within the first 1 KiB.
    writeFileSync(join(cwd, 'in', 'prefixed.pdf'), Buffer.concat([Buffer.from('junk\n'), await invoicePdf(7, 2)]));
    const dry = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    const estimates = new Map(
      dry.summary.documents.map((d) => [sha(readFileSync(join(cwd, d.file))), d.pages_estimate ?? null]),
    );
    expect([...estimates.values()].sort()).toEqual([2, 3, 3]);

    const server = await emulator();
    const real = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'upload' }));
    expect(real.summary.completed).toBe(3);
    const ledger = LedgerBody.parse(await (await fetch(`${server.url}/_emulator/ledger`)).json());
    const charged = new Map(ledger.entries.filter((e) => e.kind === 'reserve').map((e) => [e.sha256, e.pages]));
    expect(charged).toEqual(estimates);
  });

  it('a file the service cannot read has no estimate, not a guess', async () => {
    const cwd = await invoiceDir(0);
    writeFileSync(join(cwd, 'in', 'broken.pdf'), '%PDF-1.7\n1 0 obj << /Type /Page >> endobj\n%%EOF\n');
    const dry = await run(cwd, ['in/broken.pdf'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(dry.summary.documents).toEqual([expect.objectContaining({ outcome: 'planned', pages_estimate: undefined })]);
    expect(dry.stdout + dry.stderr).toMatch(/\?\s+pages\s+in\/broken\.pdf/);
  });
});
