import { zipSync } from 'fflate';
import { describe, expect } from 'vitest';
import { waitForDocument } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { mailer } from '../helpers/smtp.ts';
import { ledgerTotals } from '../batch/harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * serve reads archives as the batch client does: the application's upload takes a zip, each
 * member a document (`batch.zip!a.pdf`); an email's zip attachment too, and the images its
 * HTML body shows inline are not documents. A zip bomb is refused whole, nothing charged.
 */

type Documents = { documents: Array<{ document_id: string; status: string }> };

async function upload(url: string, bytes: Uint8Array, name: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(bytes)], { type: 'application/zip' }), name);
  return fetch(`${url}/_emulator/parsers/prs_invoices/documents`, { method: 'POST', body: form });
}

/** The file names of the emulator's documents (its own surface: GET /_emulator/documents). */
async function fileNames(url: string): Promise<string[]> {
  const body = (await (await fetch(`${url}/_emulator/documents?limit=100`)).json()) as {
    documents: Array<{ file_name: string }>;
  };
  return body.documents.map((d) => d.file_name).sort();
}

describe('serve: a zip is a folder', () => {
  it('the application upload takes a zip: each member that is a document is one, named batch.zip!member', async ({
    emulator,
  }) => {
    const s = await emulator();
    const zip = zipSync({
      'nov/a.pdf': await invoicePdf(8001),
      'nov/b.pdf': await invoicePdf(8002),
      'readme.txt': Buffer.from('for accounts\n'),
    });
    const res = await upload(s.url, zip, 'batch.zip');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Documents;
    expect(body.documents).toHaveLength(2);
    for (const d of body.documents) expect((await waitForDocument(s, d.document_id)).body.status).toBe('completed');
    expect(await fileNames(s.url)).toEqual(['batch.zip!nov/a.pdf', 'batch.zip!nov/b.pdf']);
    expect((await ledgerTotals(s.url)).net).toBe(2);
  });

  it('a zip bomb uploaded is refused whole, naming it; nothing is charged', async ({ emulator }) => {
    const s = await emulator();
    const res = await upload(s.url, zipSync({ 'zeros.pdf': new Uint8Array(80 * 1024 * 1024) }), 'bomb.zip');
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(
      /bomb\.zip: expands to 80\.0 MiB .*nothing from this request was accepted/,
    );
    expect((await ledgerTotals(s.url)).net).toBe(0);
  });

  it('an email with a zip attached and an inline logo: the zip members are the documents, the logo is not', async ({
    emulator,
  }) => {
    const s = await emulator({}, { smtpPort: 0 });
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
        '1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082',
      'hex',
    );
    await mailer(s.smtpPort!).sendMail({
      from: 'ap@example.com',
      to: 'prs_invoices@localhost',
      subject: 'Invoices',
      html: '<p>attached</p><img src="cid:logo@example.com">',
      attachments: [
        { filename: 'mailed.zip', content: Buffer.from(zipSync({ 'c.pdf': await invoicePdf(8003) })) },
        { filename: 'logo.png', content: png, cid: 'logo@example.com' },
      ],
    });
    await expect.poll(() => fileNames(s.url), { timeout: 60_000 }).toEqual(['mailed.zip!c.pdf']);
  });
});
