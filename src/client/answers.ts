import type { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'undici/types/header.js';
import { z } from 'zod';
import {
  DocumentBody,
  describeZodErrorInline,
  ExtractAcceptedResponse,
  ExtractFailedResponse,
  ExtractInlineResponse,
} from '../contract/index.ts';
import { type Step, unreadableAnswer } from '../cost/attempt.ts';
import { MAX_ANSWER_DEPTH, nestsDeeperThan, parseJson, topLevelScalars } from './answer-depth.ts';
import { describeErrorBody, isPageCount, ServiceError } from './errors.ts';

/** An HTTP answer as the client read it: status, headers and the whole body as text. */
export type Answer = { status: number; text: string; headers: IncomingHttpHeaders };

/** The largest answer the client reads: a result is kilobytes; a hostile or broken server's 300 MB is refused. */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/**
 * Response shapes as the client accepts them: the contract's schemas, loosened where the
 * spec says "not shown" so a real service that omits a field still works. Extra keys pass.
 */
export const AcceptedExtract = ExtractAcceptedResponse.partial({ success: true, status: true, poll_url: true });
// Loose: a page_count beside the results (not in the spec) saves a GET when present.
export const InlineExtract = ExtractInlineResponse.partial({ parser_id: true }).loose();
export const FetchedDocument = DocumentBody.partial({ file_name: true, page_count: true, results: true, error: true });

export type InlineResult = z.infer<typeof InlineExtract>;
export type AcceptedResult = z.infer<typeof AcceptedExtract>;
/** A document as GET returns it, with the fields the service may omit filled with null. */
export type FetchedDocument = DocumentBody;

/**
 * A body read up to `limit` bytes and within `timeLeftMs`; beyond either, the read stops (the
 * connection is dropped) and the answer is an error. Events, not an async iterator: cheaper for
 * the one or two chunks of a typical answer.
 */
export function readCapped(body: Readable, limit: number, timeLeftMs: number | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer =
      timeLeftMs === undefined
        ? undefined
        : setTimeout(
            () => body.destroy(answerError('EXTRACT_ANSWER_TIMEOUT', 'the answer did not arrive in time')),
            Math.max(0, timeLeftMs),
          ).unref();
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) body.destroy(answerError('EXTRACT_ANSWER_TOO_LARGE', `the answer is over ${limit} bytes`));
      else chunks.push(chunk);
    });
    body.once('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    });
    body.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function answerError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The answer's body, read as the contract says. A body too deep to hold, not JSON, of the wrong
 * shape, or whose page_count is not a number of pages is a bad answer; when it still names its
 * document (and pages), the error carries them, so the journal keeps what was charged.
 */
export function parseBody<T extends z.ZodType>(schema: T, answer: Answer, step: Step, subject: string): z.infer<T> {
  const bad = (what: string, named: Record<string, unknown> = {}): ServiceError => {
    const documentId = step === 'get' ? subject : named.document_id;
    return new ServiceError('bad_response', `${step} for ${subject}: HTTP ${answer.status} with ${what}`, {
      status: answer.status,
      charge: unreadableAnswer(step).charge,
      documentId: typeof documentId === 'string' && documentId !== '' ? documentId : undefined,
      pageCount: isPageCount(named.page_count) ? named.page_count : undefined,
    });
  };
  if (nestsDeeperThan(answer.text, MAX_ANSWER_DEPTH)) {
    throw bad(
      `results nested deeper than ${MAX_ANSWER_DEPTH} levels, which no document needs`,
      topLevelScalars(answer.text),
    );
  }
  let json: unknown;
  try {
    json = answer.text.trim() === '' ? {} : JSON.parse(answer.text);
  } catch {
    throw bad(`a body that is not JSON: ${describeErrorBody(answer.text)}`);
  }
  const named: Record<string, unknown> = typeof json === 'object' && json !== null ? { ...json } : {};
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw bad(`an unexpected body (${describeZodErrorInline(parsed.error, 5)})`, named);
  const pages = named.page_count;
  if (pages !== undefined && pages !== null && !isPageCount(pages)) {
    throw bad(`page_count ${JSON.stringify(pages)}, which is not a number of pages`, named);
  }
  return parsed.data;
}

/**
 * An inline answer `success: false` (HTTP 200): the extraction failed and the service refunded
 * it; its document_id is kept. Undefined for any other answer, which parseBody reads.
 */
export function failedExtraction(answer: Answer, subject: string): ServiceError | undefined {
  if (answer.status < 200 || answer.status >= 300 || !/"success"\s*:\s*false/.test(answer.text)) return undefined;
  const parsed = FailedExtract.safeParse(parseJson(answer.text));
  if (!parsed.success) return undefined;
  const { document_id: documentId, error, message } = parsed.data;
  const why = describeErrorBody(JSON.stringify({ error: error ?? message ?? 'no reason given' }));
  return new ServiceError('rejected', `${subject}: the service's extraction failed (success: false: ${why})`, {
    status: answer.status,
    charge: 'refunded',
    retryable: true,
    documentId: documentId === undefined || documentId === '' ? undefined : documentId,
  });
}

/** The contract's failed extraction as any service may write it: the id and the reason optional, `message` for `error`. */
const FailedExtract = ExtractFailedResponse.omit({ parser_id: true })
  .partial({ document_id: true, error: true })
  .extend({ message: z.string().optional() });
