import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect } from 'vitest';
import { batchOptions, invoiceDir, ledgerTotals, run } from '../batch/harness.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Mail is a folder: a mail's attachments are documents of their own (`mail.eml!invoice.pdf`),
 * the images its body shows inline are not, a zip attached is expanded (one level of nesting),
 * and a forwarded message's attachments are read through it. Each paid once.
 */

// The smallest PNG: an inline logo in the HTML body.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082',
  'hex',
);

function compose(mail: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer(mail).compile().build();
}

const done = (r: Awaited<ReturnType<typeof run>>) =>
  r.summary.documents
    .filter((d) => d.status === 'completed')
    .map((d) => d.file)
    .sort();

describe('mail is a folder', () => {
  it('a multipart mail with two PDFs and an inline image: the two PDFs are documents, the logo is not; a rerun pays nothing', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const eml = await compose({
      from: 'supplier@example.com',
      to: 'accounts@example.com',
      subject: 'Invoices for November',
      text: 'Two invoices attached.',
      html: '<p>Two invoices attached.</p><img src="cid:logo@example.com">',
      attachments: [
        { filename: 'invoice-1.pdf', content: await invoicePdf(6001) },
        { filename: 'invoice-2.pdf', content: await invoicePdf(6002) },
        { filename: 'logo.png', content: PNG, cid: 'logo@example.com' },
      ],
    });
    writeFileSync(join(cwd, 'in', 'mail.eml'), eml);
    const options = batchOptions(server.url, KEY, { route: 'inline' });
    const first = await run(cwd, ['in/'], options);
    expect(done(first), first.stderr).toEqual(['in/mail.eml!invoice-1.pdf', 'in/mail.eml!invoice-2.pdf']);
    expect(first.summary.documents).toHaveLength(2);
    const again = await run(cwd, ['in/'], options);
    expect(again.summary.pages_charged).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(2);
  });

  it('a zip attached to a mail is expanded (mail.eml!batch.zip!a.pdf); a forwarded message is read through', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const zip = zipSync({ 'a.pdf': await invoicePdf(6101), 'b.pdf': await invoicePdf(6102) });
    writeFileSync(
      join(cwd, 'in', 'nested.eml'),
      await compose({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'batch',
        text: 'see the zip',
        attachments: [{ filename: 'batch.zip', content: Buffer.from(zip) }],
      }),
    );
    const original = await compose({
      from: 'supplier@example.com',
      to: 'boss@example.com',
      subject: 'Invoice 6201',
      text: 'attached',
      attachments: [{ filename: 'invoice-6201.pdf', content: await invoicePdf(6201) }],
    });
    writeFileSync(
      join(cwd, 'in', 'forwarded.eml'),
      await compose({
        from: 'boss@example.com',
        to: 'accounts@example.com',
        subject: 'Fwd: Invoice 6201',
        text: 'please pay',
        attachments: [{ filename: 'Invoice 6201.eml', content: original, contentType: 'message/rfc822' }],
      }),
    );
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    // mailparser reads into an attached message: its attachments are the forwarding mail's own.
    expect(done(r), r.stderr).toEqual([
      'in/forwarded.eml!invoice-6201.pdf',
      'in/nested.eml!batch.zip!a.pdf',
      'in/nested.eml!batch.zip!b.pdf',
    ]);
    expect((await ledgerTotals(server.url)).net).toBe(3);
  });

  it('a zip in a zip in a mail is not expanded: one level of nesting; the inner zip is listed as no document', async () => {
    const cwd = await invoiceDir(0);
    const inner = zipSync({ 'deep.pdf': await invoicePdf(6301) });
    const outer = zipSync({ 'inner.zip': inner, 'top.pdf': await invoicePdf(6302) });
    writeFileSync(
      join(cwd, 'in', 'deep.eml'),
      await compose({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'deep',
        text: '',
        attachments: [{ filename: 'outer.zip', content: Buffer.from(outer) }],
      }),
    );
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(r.summary.documents.map((d) => d.file)).toEqual(['in/deep.eml!outer.zip!top.pdf']);
    expect(r.summary.not_documents).toEqual([{ file: 'in/deep.eml!outer.zip!inner.zip', type: 'application/zip' }]);
  });

  it('a mail of 1,200 attachments is read whole: its parts are members, bounded as an archive’s are, not by the parser’s 1,000', async () => {
    const cwd = await invoiceDir(0);
    const notes = Array.from({ length: 1199 }, (_, i) => ({ filename: `note-${i}.txt`, content: `note ${i}` }));
    writeFileSync(
      join(cwd, 'in', 'many.eml'),
      await compose({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'many',
        text: '',
        attachments: [{ filename: 'invoice.pdf', content: await invoicePdf(6401) }, ...notes],
      }),
    );
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(
      r.summary.documents.map((d) => d.file),
      r.stderr,
    ).toEqual(['in/many.eml!invoice.pdf']);
    expect(r.summary.not_documents).toHaveLength(1199);
  });
});
