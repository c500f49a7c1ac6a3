import { describe, expect } from 'vitest';
import { DocumentBody, LedgerBody, UploadTicket } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { tempDir, writeJson } from '../helpers/cli.ts';
import { call, inlineBody, waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

describe('emulator: restart', () => {
  it('after kill -9 mid-processing, every document is still there, those processing finish, and the ledger adds up', async ({
    spawnServe,
  }) => {
    const dir = tempDir();
    const config = writeJson(dir, 'config.json', {
      ...DEFAULT_CONFIG,
      processing: { ms_per_page: 150, concurrency: 1 },
    });
    const dataDir = `${dir}/data`;
    const first = await spawnServe(['--config', config, '--data-dir', dataDir]);

    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const bytes = await invoicePdf(i, 2);
      const t = UploadTicket.parse(
        (
          await call(first, 'POST', '/api/v1/upload-url', {
            body: { file_name: `inv-${i}.pdf`, file_type: 'application/pdf' },
          })
        ).body,
      );
      expect(
        (
          await call(first, 'PUT', t.upload_url, {
            raw: bytes,
            key: null,
            headers: { 'content-type': 'application/pdf' },
          })
        ).status,
      ).toBe(200);
      const r = await call(first, 'POST', '/api/v1/extract', { body: { storage_path: t.storage_path } });
      expect(r.status).toBe(200);
      ids.push(r.body.document_id);
    }
    // An inline request in flight when the server dies: its client never learns the id.
    const inflight = call(first, 'POST', '/api/v1/extract', { body: inlineBody(await invoicePdf(99, 2)) }).catch(
      () => null,
    );
    await waitForDocument(first, ids[0]!);
    const before = await Promise.all(
      ids.map(async (id) => DocumentBody.parse((await call(first, 'GET', `/api/v1/documents/${id}`)).body).status),
    );
    expect(before).toContain('processing');
    first.child.kill('SIGKILL');
    await first.child;
    await inflight;

    const second = await spawnServe(['--config', config, '--data-dir', dataDir]);
    for (const id of ids) {
      const doc = DocumentBody.parse((await waitForDocument(second, id)).body);
      expect(doc.status).toBe('completed');
      expect(doc.page_count).toBe(2);
      expect(doc.results?.invoice_number).toMatch(/^INV-0000\d$/);
    }
    const ledger = LedgerBody.parse((await call(second, 'GET', '/_emulator/ledger')).body);
    const reserves = ledger.entries.filter((e) => e.kind === 'reserve');
    const refunds = ledger.entries.filter((e) => e.kind === 'refund');
    // Each stored document reserved exactly once, never refunded.
    for (const id of ids) expect(reserves.filter((e) => e.document_id === id)).toHaveLength(1);
    expect(refunds.filter((e) => ids.includes(e.document_id!))).toHaveLength(0);
    // Whatever else was reserved (the inline request, if it got that far) was refunded: nobody pays for it.
    const others = reserves.filter((e) => !ids.includes(e.document_id!));
    for (const r of others) expect(refunds.some((f) => f.document_id === r.document_id)).toBe(true);
    expect(ledger.balance).toBe(1000 - 2 * ids.length);
  });
});
