import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { ParserConfig } from '../../contract/index.ts';
import { ServiceError } from '../errors.ts';
import type { Gateway } from '../gateway.ts';

/**
 * Documents by email (source_type "email"): an SMTP listener on loopback. A message to
 * `<parser_id>@<anything>` becomes one document per attachment. Out of credits is a
 * temporary SMTP failure (452), so the sending server tries again later, as mail does.
 */
export const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

export type EmailArrivals = { port: number; close(): Promise<void> };

export async function startEmailArrivals(input: {
  gateway: Gateway;
  parsers: ReadonlyMap<string, ParserConfig>;
  host: string;
  port: number;
  log: (line: string) => void;
}): Promise<EmailArrivals> {
  const { gateway, parsers, log } = input;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    banner: 'extract serve (emulated document intake)',
    logger: false,
    onRcptTo(address, _session, callback) {
      const parserId = address.address.split('@')[0] ?? '';
      if (!parsers.has(parserId)) {
        callback(Object.assign(new Error(`no parser ${parserId}: send to <parser_id>@localhost`), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      void (async () => {
        const mail = await simpleParser(stream);
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          throw Object.assign(new Error('message too large'), { responseCode: 552 });
        }
        const recipients = session.envelope.rcptTo.map((r) => r.address.split('@')[0]!);
        const attachments = mail.attachments.filter((a) => a.contentDisposition !== 'inline' || a.filename);
        if (attachments.length === 0) log(`email from ${session.envelope.mailFrom || '(unknown)'}: no attachment, nothing to extract`);
        for (const parserId of recipients) {
          const parser = parsers.get(parserId)!;
          for (const a of attachments) {
            try {
              const r = await gateway.submitArrived(parser, { bytes: a.content, fileName: a.filename ?? 'attachment', declaredType: a.contentType, source: 'email' });
              log(`email attachment ${a.filename ?? '(unnamed)'} -> ${r.document_id}`);
            } catch (err) {
              if (err instanceof ServiceError && err.code === 'insufficient_credits') {
                throw Object.assign(new Error(err.message), { responseCode: 452 });
              }
              if (err instanceof ServiceError) {
                log(`email attachment ${a.filename ?? '(unnamed)'} skipped: ${err.message}`);
                continue;
              }
              throw err;
            }
          }
        }
      })().then(
        () => callback(),
        (err: Error & { responseCode?: number }) => callback(Object.assign(new Error(err.message), { responseCode: err.responseCode ?? 451 })),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(input.port, input.host, () => resolve());
  });
  server.on('error', (err) => log(`smtp: ${err.message}`));
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : input.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
