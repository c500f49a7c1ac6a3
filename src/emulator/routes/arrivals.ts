import type Multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDiskFull } from '../../errno.ts';
import { EMULATOR_PREFIX, ExtractInlineRequest, type ParserConfig, type SourceType } from '../../contract/index.ts';
import { INBOUND_PREFIX, type InboundTokens } from '../arrivals/inbound.ts';
import { GatewayError } from '../errors.ts';
import { arrivalTooLarge, type Intake, MAX_ARRIVAL_FILE_BYTES, MAX_ARRIVAL_FILES } from '../arrivals/intake.ts';
import { stageBytes, stageStream, unstage, type StagedFile } from '../staging.ts';
import { importEngine } from '../../engine-package.ts';
import { isZipArrival, unzipArrival } from '../arrivals/zip-arrival.ts';

// From the engine package (src/engine-package.ts).
const { default: multipart } = await importEngine<{ default: typeof Multipart }>('@fastify/multipart');
import { parseBody } from './http.ts';

/**
 * The routes by which documents arrive besides the API: the application's upload
 * (multipart, source_type "upload") and the per-parser inbound webhook (multipart or JSON
 * with base64, source_type "webhook"). Both answer at once; extraction runs in the background.
 */
export function arrivalRoutes(input: {
  intake: Intake;
  parsers: ReadonlyMap<string, ParserConfig>;
  inbound: InboundTokens;
  partialDir: string;
}) {
  const { intake, parsers, inbound, partialDir } = input;
  return async (app: FastifyInstance) => {
    await app.register(multipart, {
      limits: { fileSize: MAX_ARRIVAL_FILE_BYTES, files: MAX_ARRIVAL_FILES, fields: 20, parts: 40 },
    });

    /**
     * Streams every file part to disk (staging.ts), then submits them all or none; the staged
     * files are removed whatever happens (the documents keep hard links of their own).
     */
    const submitForm = async (
      request: FastifyRequest,
      reply: FastifyReply,
      parser: ParserConfig,
      source: SourceType,
    ) => {
      const staged: Array<{ file: StagedFile; fileName: string; declaredType: string }> = [];
      try {
        try {
          for await (const part of request.files()) {
            const tooLarge = arrivalTooLarge(part.filename);
            // Counted as it arrives: the answer goes as soon as the limit is passed, and the
            // connection is closed after it rather than the rest of the file read and discarded.
            part.file.once('limit', () => {
              void reply.header('connection', 'close');
              part.file.destroy(tooLarge);
            });
            const file = await stageStream(partialDir, part.file);
            staged.push({ file, fileName: part.filename || 'upload', declaredType: part.mimetype });
            if (part.file.truncated) throw tooLarge;
          }
        } catch (err) {
          // busboy reports a broken form as a plain Error: that is the sender's mistake, not ours.
          if (
            err instanceof GatewayError ||
            (err as { statusCode?: number }).statusCode !== undefined ||
            isDiskFull(err)
          )
            throw err;
          throw new GatewayError(
            'invalid_request',
            `the multipart form is malformed (${(err as Error).message}): send each document as a file field`,
          );
        }
        if (staged.length === 0)
          throw new GatewayError('invalid_request', 'no file in the form: send the document as a multipart file field');
        // A zip is a folder: its members are the documents (a member that is no document is left out).
        const unzipped = staged.some((s) => isZipArrival(s.fileName, s.declaredType));
        const files: typeof staged = [];
        for (const s of [...staged])
          if (isZipArrival(s.fileName, s.declaredType)) {
            const members = await unzipArrival(partialDir, s);
            staged.push(...members.map((m) => ({ ...m, declaredType: '' })));
            files.push(...members.map((m) => ({ ...m, declaredType: '' })));
          } else files.push(s);
        const { accepted } = await intake.submit(
          files.map((s) => ({ ...s, parser, source })),
          { skipUnreadable: unzipped },
        );
        return accepted;
      } finally {
        await Promise.all(staged.map((s) => unstage(s.file)));
      }
    };

    // The application's upload: what the web page's drop zone posts.
    app.post<{ Params: { parser_id: string } }>(
      `${EMULATOR_PREFIX}/parsers/:parser_id/documents`,
      async (request, reply) => {
        const parser = intake.parser(request.params.parser_id);
        if (!request.isMultipart())
          throw new GatewayError('unsupported_media_type', 'upload files as multipart/form-data');
        return { success: true, documents: await submitForm(request, reply, parser, 'upload') };
      },
    );

    // The inbound webhook: the address itself is the credential.
    app.post<{ Params: { parser_id: string; token: string } }>(
      `${INBOUND_PREFIX}/:parser_id/:token`,
      async (request, reply) => {
        const parser = parsers.get(request.params.parser_id);
        if (!parser || !inbound.verify(parser.parser_id, request.params.token)) {
          throw new GatewayError(
            'not_found',
            'no inbound address here: copy the inbound URL that extract serve printed on start',
          );
        }
        if (request.isMultipart()) {
          const docs = await submitForm(request, reply, parser, 'webhook');
          return docs.length === 1 ? docs[0] : { success: true, documents: docs };
        }
        const { file } = parseBody(ExtractInlineRequest, request.body);
        const staged = await stageBytes(partialDir, Buffer.from(file.data, 'base64'));
        try {
          const { accepted } = await intake.submit([
            { parser, file: staged, fileName: file.name, declaredType: file.type, source: 'webhook' },
          ]);
          return accepted[0];
        } finally {
          await unstage(staged);
        }
      },
    );
  };
}
