/**
 * A mail's attachments (.eml, RFC 5322 with MIME), read by mailparser, as `serve`'s email
 * arrival reads them. Loaded only when a run meets a mail: the parser and its character sets
 * are most of a megabyte of the client's bundle.
 *
 * The parts of the message itself are not documents: the text, and the images a HTML body
 * shows inline (multipart/related, `cid:`), are passed over. mailparser reads into a message
 * attached to the mail (a forwarded one): its attachments come as the mail's own. One it hands
 * over whole (message/rfc822) is a member named `….eml`, which the expander reads in turn.
 */
import { extension } from 'mime-types';
import { simpleParser } from 'mailparser';
import { rangeOf } from './read.ts';
import { type ContainerReader, type Member, Refused, sizeText } from './container.ts';

export const readMail: ContainerReader = async function* (handle, fileSize, bounds): AsyncGenerator<Member> {
  if (fileSize > bounds.mailBytes)
    throw new Refused(`a mail of ${sizeText(fileSize)}, larger than the ${sizeText(bounds.mailBytes)} extract reads`);
  const stream = rangeOf(handle, 0, fileSize);
  let mail: Awaited<ReturnType<typeof simpleParser>>;
  try {
    // skipHtmlToText etc.: only the attachments are wanted, not the body rendered as text.
    // maxChildNodes: a mail's parts are bounded as an archive's members are (the parser's own is 1,000).
    mail = await simpleParser(stream, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      maxChildNodes: bounds.members,
    });
  } catch (err) {
    throw new Refused(`not a mail that can be read (${err instanceof Error ? err.message : String(err)})`);
  } finally {
    stream.destroy();
  }
  let n = 0;
  for (const a of mail.attachments) {
    n++;
    if (a.related === true) continue;
    const rfc822 = a.contentType === 'message/rfc822';
    const given = a.filename ?? (rfc822 ? 'message' : `attachment-${n}`);
    const ext = rfc822 ? 'eml' : extension(a.contentType);
    const name = given.includes('.') || ext === false ? given : `${given}.${ext}`;
    yield { kind: 'file', name: rfc822 && !/\.eml$/i.test(name) ? `${name}.eml` : name, open: () => a.content };
  }
};
