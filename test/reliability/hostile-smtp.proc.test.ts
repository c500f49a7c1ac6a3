import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { type ServeProcess, writeJson } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { MAX_SMTP_CLIENTS } from '../../src/emulator/arrivals/email.ts';
import { mailer, sendBigMail, smtpSession } from '../helpers/smtp.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * SMTP counts bytes as they arrive. A message over the limit without SIZE= is
 * answered 552, concurrent ones share one budget, and a message the MIME parser refuses is
 * answered as soon as it is read (not a 421 a minute later). What serve's memory does meanwhile
 * is not asserted here.
 */

/** Three times the 50 MB limit. */
const MESSAGE_MIB = 150;

/** smtp-server's default socketTimeout: an idle session is closed with a 421 after it. */
const SMTP_SOCKET_TIMEOUT_MS = 60_000;

/**
 * One serve for the two tests that need a child (its start costs about as much CPU as a test):
 * the memory test runs first, on a fresh process, and the MIME test after it reads no memory.
 */
let serve: ServeProcess;
let port = 0;
it.beforeAll(async ({ fileTempDir, fileSpawn }) => {
  const dir = fileTempDir();
  const config = writeJson(dir, 'config.json', { ...DEFAULT_CONFIG, processing: { ms_per_page: 0, concurrency: 1 } });
  serve = await fileSpawn.spawnServe(['--config', config, '--data-dir', join(dir, 'data'), '--smtp-port', '0']);
  port = Number((await serve.waitFor(/via SMTP \S+:(\d+)/))[1]);
}, 120_000);

describe('hostile: SMTP bounded as it arrives', () => {
  it(`a ${MESSAGE_MIB} MB message without SIZE=, then two at once: 552 each, serve goes on`, {
    timeout: 300_000,
  }, async () => {
    const one = await sendBigMail(port, { to: 'prs_invoices@localhost', mib: MESSAGE_MIB });
    expect(one.reply).toMatch(/^552 /);
    const two = await Promise.all(
      [1, 2].map(() => sendBigMail(port, { to: 'prs_invoices@localhost', mib: MESSAGE_MIB })),
    );
    for (const r of two) expect(r.reply).toMatch(/^552 /);
    // Still serving mail: an honest message is accepted.
    const transport = mailer(port);
    const ok = await transport.sendMail({
      from: 'ap@example.com',
      to: 'prs_invoices@localhost',
      subject: 'Invoice',
      text: 'attached',
      attachments: [{ filename: 'inv.pdf', content: await invoicePdf(3), contentType: 'application/pdf' }],
    });
    expect(ok.response).toMatch(/^250 /);
  });

  it('a message the MIME parser refuses (a 2 MB header) over the socket buffers is answered within seconds, not a 421 after 60 s', {
    timeout: 120_000,
  }, async () => {
    const r = await sendBigMail(port, { to: 'prs_invoices@localhost', mib: 20, headerBytes: 2 * 1024 * 1024 });
    expect(r.reply).toMatch(/^554 .*could not be read as MIME/);
    // The old stall ended at smtp-server's socket time-out (60 s) with a 421: the 554 above says
    // the message was read and refused, and this says it was not left waiting for that time-out
    // (a bound of 15 s here failed on a busy machine: parsing 20 MiB is CPU work).
    expect(r.msAfterLastByte).toBeLessThan(SMTP_SOCKET_TIMEOUT_MS);
  });

  it('SMTP sessions are capped: past MAX_SMTP_CLIENTS idle ones, a new one is told 421 and closed', {
    timeout: 120_000,
  }, async ({ emulator }) => {
    const s = await emulator({}, { smtpPort: 0 });
    const idle = await Promise.all(Array.from({ length: MAX_SMTP_CLIENTS }, () => smtpSession(s.smtpPort!)));
    for (const i of idle) expect(await i.next()).toMatch(/^220 /);
    const extra = await smtpSession(s.smtpPort!);
    expect(await extra.next()).toMatch(/^421 /);
    for (const i of [...idle, extra]) i.socket.destroy();
  });
});
