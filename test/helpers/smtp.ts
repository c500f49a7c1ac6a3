import { connect, type Socket } from 'node:net';
import nodemailer from 'nodemailer';
import { onTestFinished } from 'vitest';

/**
 * A bare SMTP client for hostile tests: it sends what a careless or hostile sender would (no
 * SIZE=, a body generated as it goes, never held whole) and reports the server's reply to DATA.
 */
export type SmtpSession = { socket: Socket; next(): Promise<string> };

export async function smtpSession(port: number): Promise<SmtpSession> {
  const socket = connect({ host: '127.0.0.1', port });
  let buffered = '';
  const waiting: Array<(reply: string) => void> = [];
  const replies: string[] = [];
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    // A complete reply ends with a line "NNN text" (a space after the code).
    for (;;) {
      const m = /^(?:\d{3}-[^\n]*\n)*\d{3}(?: [^\n]*)?\n/.exec(buffered);
      if (!m) break;
      buffered = buffered.slice(m[0].length);
      const w = waiting.shift();
      if (w) w(m[0]);
      else replies.push(m[0]);
    }
  });
  socket.on('error', () => {});
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const r = replies.shift();
      if (r !== undefined) return resolve(r);
      waiting.push(resolve);
      socket.once('close', () => reject(new Error(`connection closed before a reply (${buffered})`)));
    });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return { socket, next };
}

async function command(s: SmtpSession, line: string, expected: RegExp): Promise<void> {
  s.socket.write(`${line}\r\n`);
  const reply = await s.next();
  if (!expected.test(reply)) throw new Error(`${line} -> ${reply}`);
}

async function write(socket: Socket, chunk: Buffer | string): Promise<void> {
  if (!socket.write(chunk)) await new Promise<void>((resolve) => socket.once('drain', () => resolve()));
}

/** One MiB of base64 lines (76 characters and CRLF), the body of an attachment. */
const BASE64_MIB = Buffer.from(`${'QUFB'.repeat(19)}\r\n`.repeat(Math.ceil((1024 * 1024) / 78)));

/**
 * Sends one message of about `mib` MiB (a PDF attachment in base64, generated chunk by chunk)
 * to `to`, without SIZE=, and resolves with the reply to DATA and how long after the last byte
 * it came. `headerBytes` adds a folded header of that size first (the MIME parser refuses a
 * header over 1 MiB at once).
 */
export async function sendBigMail(
  port: number,
  options: { to: string; mib: number; headerBytes?: number },
): Promise<{ reply: string; msAfterLastByte: number }> {
  const s = await smtpSession(port);
  try {
    await s.next(); // greeting
    await command(s, 'EHLO test.local', /^250/);
    await command(s, 'MAIL FROM:<sender@example.com>', /^250/);
    await command(s, `RCPT TO:<${options.to}>`, /^250/);
    await command(s, 'DATA', /^354/);
    const boundary = 'b0undary';
    let head = `From: sender@example.com\r\nTo: ${options.to}\r\nSubject: big\r\nMIME-Version: 1.0\r\n`;
    if (options.headerBytes)
      head += `X-Pad: x\r\n${` ${'x'.repeat(70)}\r\n`.repeat(Math.ceil(options.headerBytes / 73))}`;
    head += `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="big.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n`;
    await write(s.socket, head);
    for (let i = 0; i < options.mib; i++) await write(s.socket, BASE64_MIB);
    await write(s.socket, `--${boundary}--\r\n.\r\n`);
    const sent = Date.now();
    const reply = await s.next();
    return { reply, msAfterLastByte: Date.now() - sent };
  } finally {
    s.socket.destroy();
  }
}

/** An honest sender (nodemailer) to serve's SMTP port on loopback, closed when the test ends. */
export function mailer(port: number): ReturnType<typeof nodemailer.createTransport> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  onTestFinished(() => transport.close());
  return transport;
}
