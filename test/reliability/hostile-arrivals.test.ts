import { describe, expect } from 'vitest';
import { call } from '../helpers/emulator.ts';
import { exactLedger, formOf, postForm } from '../helpers/hostile.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { mailer } from '../helpers/smtp.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * All or nothing per message: an SMTP message or an inbound multipart request is
 * accepted whole or refused whole, so the sender's retry after "out of credits" never pays twice.
 */

const documentsOf = async (s: { url: string }) =>
  (await call(s, 'GET', '/_emulator/documents?limit=100', { key: null })).body.documents as Array<{
    file_name: string;
    source_type: string;
  }>;

describe('hostile: all or nothing per message', () => {
  it('an SMTP message with 3 attachments and credits for 2 gets 452 and charges nothing; its retry charges each once', async ({
    emulator,
  }) => {
    const s = await emulator({ credits: 2 }, { smtpPort: 0 });
    const transport = mailer(s.smtpPort!);
    const attachments = await Promise.all(
      [1, 2, 3].map(async (n) => ({
        filename: `inv-${n}.pdf`,
        content: await invoicePdf(n),
        contentType: 'application/pdf',
      })),
    );
    const message = {
      from: 'ap@example.com',
      to: 'prs_invoices@localhost',
      subject: 'Invoices',
      text: 'attached',
      attachments,
    };
    await expect(transport.sendMail(message)).rejects.toThrow(/452/);
    expect(await exactLedger(s, 2)).toMatchObject({ balance: 2, entries: [] });
    expect(await documentsOf(s)).toHaveLength(0);
    // The sender retries once the account is topped up: each attachment charged exactly once.
    expect((await call(s, 'POST', '/_emulator/credits', { key: null, body: { pages: 10 } })).status).toBe(200);
    await transport.sendMail(message);
    const ledger = await exactLedger(s, 2);
    expect(ledger.entries.filter((e) => e.kind === 'reserve')).toHaveLength(3);
    expect(ledger.balance).toBe(12 - 3);
  });

  it('one parser named twice in RCPT TO gets each attachment once', async ({ emulator }) => {
    const s = await emulator({}, { smtpPort: 0 });
    const transport = mailer(s.smtpPort!);
    await transport.sendMail({
      from: 'ap@example.com',
      to: ['prs_invoices@localhost', 'prs_invoices@example.com', 'prs_invoices@localhost'],
      subject: 'Invoice',
      text: 'attached',
      attachments: [{ filename: 'once.pdf', content: await invoicePdf(4), contentType: 'application/pdf' }],
    });
    const docs = await documentsOf(s);
    expect(docs.map((d) => d.file_name)).toEqual(['once.pdf']);
    expect((await exactLedger(s, 1000)).entries.filter((e) => e.kind === 'reserve')).toHaveLength(1);
  });

  it('an inbound multipart request of 3 files with credits for 2 is refused whole (402), nothing charged; an unreadable file refuses it whole (422)', async ({
    emulator,
  }) => {
    const s = await emulator({ credits: 2 });
    const inbound = s.inboundUrls.get('prs_invoices')!;
    const files = await Promise.all([5, 6, 7].map(async (n) => ({ name: `inv-${n}.pdf`, bytes: await invoicePdf(n) })));
    const r = await postForm(inbound, formOf(files));
    expect(r.status).toBe(402);
    expect(r.body.error).toContain('nothing was accepted');
    expect(await exactLedger(s, 2)).toMatchObject({ balance: 2, entries: [] });
    const broken = await postForm(
      inbound,
      formOf([files[0]!, { name: 'broken.pdf', bytes: Buffer.from('%PDF-1.7 broken') }]),
    );
    expect(broken.status).toBe(422);
    expect(broken.body.error).toMatch(/^broken\.pdf: .*nothing from this request was accepted$/);
    expect(await exactLedger(s, 2)).toMatchObject({ balance: 2, entries: [] });
    expect(await documentsOf(s)).toHaveLength(0);
    // Two fit: both accepted, with their ids.
    const ok = await postForm(inbound, formOf(files.slice(0, 2)));
    expect(ok.status).toBe(200);
    expect(ok.body.documents).toHaveLength(2);
    expect((await exactLedger(s, 2)).balance).toBe(0);
  });

  it('file_name is kept exactly as submitted; only the storage path is sanitised', async ({ emulator }) => {
    const s = await emulator();
    const name = '../../Rechnung März 2024 <final>?.pdf';
    const inline = await call(s, 'POST', '/api/v1/extract', {
      body: { file: { data: (await invoicePdf(8)).toString('base64'), name, type: 'application/pdf' } },
    });
    expect(inline.status).toBe(200);
    const doc = await call(s, 'GET', `/api/v1/documents/${inline.body.document_id}`);
    expect(doc.body.file_name).toBe(name);
    const ticket = await call(s, 'POST', '/api/v1/upload-url', {
      body: { file_name: name, file_type: 'application/pdf' },
    });
    expect(ticket.body.storage_path).not.toContain('..');
    expect(ticket.body.storage_path).not.toContain('<');
  });
});
