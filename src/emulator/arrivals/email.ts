import { createReadStream } from 'node:fs';
import type * as Mailparser from 'mailparser';
import type * as SmtpServer from 'smtp-server';
import type { ParserConfig } from '../../contract/index.ts';
import { GatewayError } from '../errors.ts';
import { StagedTooLarge, stageBytes, stageStream, unstage, type StagedFile } from '../staging.ts';
import type { Arrival, Intake } from './intake.ts';
import { isZipArrival, unzipArrival } from './zip-arrival.ts';
import { importEngine } from '../../engine-package.ts';

// From the engine package (src/engine-package.ts).
const { simpleParser } = await importEngine<typeof Mailparser>('mailparser');
const { SMTPServer } = await importEngine<typeof SmtpServer>('smtp-server');

/**
 * Documents by email (source_type "email"): an SMTP listener on loopback. A message to
 * `<parser_id>@<anything>` becomes one document per attachment. Out of credits is a
 * temporary SMTP failure (452), so the sending server tries again later, as mail does.
 *
 * Bounded whatever the sender does: the message is counted as it arrives and streamed to a file
 * in partial/; past {@link MAX_MESSAGE_BYTES} nothing more is kept, the rest is read and
 * discarded and the answer is 552. Only then is it parsed, from the file, one message at a time
 * (the MIME parser holds attachments in memory, so concurrent messages share that one budget).
 * A message the parser refuses is answered 554 as soon as it is read.
 */
const MAX_MESSAGE_BYTES = 50 * 1024 * 1024;

/** SMTP sessions open at once (each holds a descriptor; a mail server needs few). */
export const MAX_SMTP_CLIENTS = 64;

const tooLarge = () =>
  Object.assign(new Error(`message too large: the limit is ${MAX_MESSAGE_BYTES} bytes`), { responseCode: 552 });

export type EmailArrivals = { port: number; close(): Promise<void> };

export async function startEmailArrivals(input: {
  intake: Intake;
  /** Where attachments are staged (the data directory's partial/ folder). */
  partialDir: string;
  parsers: ReadonlyMap<string, ParserConfig>;
  host: string;
  port: number;
  log: (line: string) => void;
}): Promise<EmailArrivals> {
  const { intake, partialDir, parsers, log } = input;
  // One message parsed at a time: the parser's memory is one budget for every sender.
  let parsing: Promise<unknown> = Promise.resolve();
  const parseInTurn = <T>(parse: () => Promise<T>): Promise<T> => {
    const turn = parsing.then(parse, parse);
    parsing = turn.catch(() => {});
    return turn;
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    // Connections bounded as HTTP's are: past this many, a new one is answered 421 and closed.
    maxClients: MAX_SMTP_CLIENTS,
    banner: 'extract serve (emulated document intake)',
    logger: false,
    // On close, a sender still connected (one left hanging after a 452, say) is cut after a second, not the default 30.
    closeTimeout: 1000,
    onRcptTo(address, _session, callback) {
      const parserId = address.address.split('@')[0] ?? '';
      if (!parsers.has(parserId)) {
        callback(
          Object.assign(new Error(`no parser ${parserId}: send to <parser_id>@localhost`), { responseCode: 550 }),
        );
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      void (async () => {
        let message: StagedFile;
        try {
          message = await stageStream(partialDir, stream, { maxBytes: MAX_MESSAGE_BYTES });
        } catch (err) {
          if (err instanceof StagedTooLarge) throw tooLarge();
          throw err;
        }
        if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
          await unstage(message);
          throw tooLarge();
        }
        let mail: Awaited<ReturnType<typeof simpleParser>>;
        try {
          mail = await parseInTurn(() => simpleParser(createReadStream(message.path)));
        } catch (err) {
          throw Object.assign(
            new Error(`the message could not be read as MIME (${(err as Error).message}): nothing was accepted`),
            { responseCode: 554 },
          );
        } finally {
          await unstage(message);
        }
        // One parser named twice in RCPT TO is one recipient: it gets each attachment once.
        const recipients = [...new Set(session.envelope.rcptTo.map((r) => r.address.split('@')[0]!))];
        // The images a HTML body shows (multipart/related, cid:) are the message, not documents: as the batch client reads mail.
        const attachments = mail.attachments.filter(
          (a) => a.related !== true && (a.contentDisposition !== 'inline' || a.filename),
        );
        if (attachments.length === 0)
          log(`email from ${session.envelope.mailFrom || '(unknown)'}: no attachment, nothing to extract`);
        const staged: StagedFile[] = [];
        try {
          const arrivals: Arrival[] = [];
          for (const a of attachments) {
            const file = await stageBytes(partialDir, a.content);
            staged.push(file);
            const attached = { file, fileName: a.filename ?? 'attachment', declaredType: a.contentType };
            // A zip attached is a folder: its members are the documents.
            const files = isZipArrival(attached.fileName, attached.declaredType)
              ? await unzipArrival(partialDir, attached)
              : [attached];
            for (const f of files) {
              if (f !== attached) staged.push(f.file);
              for (const parserId of recipients)
                arrivals.push({ parser: parsers.get(parserId)!, ...f, source: 'email' });
            }
          }
          if (arrivals.length === 0) return;
          // The whole message or nothing: out of credits charges none of it, so the sender's retry pays once.
          const { accepted, skipped } = await intake.submit(arrivals, { skipUnreadable: true });
          for (const s of skipped) log(`email attachment ${s.fileName} skipped: ${s.reason}`);
          for (const r of accepted) log(`email attachment -> ${r.document_id}`);
        } catch (err) {
          if (err instanceof GatewayError && err.code === 'insufficient_credits') {
            throw Object.assign(new Error(err.message), { responseCode: 452 });
          }
          // A zip refused (a bomb, a link in it): sending it again would not help.
          if (err instanceof GatewayError && err.code === 'invalid_request')
            throw Object.assign(new Error(err.message), { responseCode: 554 });
          throw err;
        } finally {
          await Promise.all(staged.map(unstage));
        }
      })().then(
        () => callback(),
        (err: Error & { responseCode?: number }) =>
          callback(Object.assign(new Error(err.message), { responseCode: err.responseCode ?? 451 })),
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
