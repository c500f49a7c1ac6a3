import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { EMULATOR_PREFIX, ExtractInlineRequest, type ParserConfig, type SourceType } from '../../contract/index.ts';
import { INBOUND_PREFIX, type InboundTokens } from '../arrivals/inbound.ts';
import { ServiceError } from '../errors.ts';
import type { Gateway } from '../gateway.ts';
import { parseBody } from './http.ts';

/** Files larger than this go through the API's upload-and-poll route instead. */
export const MAX_ARRIVAL_FILE_BYTES = 100 * 1024 * 1024;
const MAX_FILES = 20;

/**
 * The routes by which documents arrive besides the API: the application's upload
 * (multipart, source_type "upload") and the per-parser inbound webhook (multipart or JSON
 * with base64, source_type "webhook"). Both answer at once; extraction runs in the background.
 */
export function arrivalRoutes(input: { gateway: Gateway; parsers: ReadonlyMap<string, ParserConfig>; inbound: InboundTokens }) {
  const { gateway, parsers, inbound } = input;
  return async (app: FastifyInstance) => {
    await app.register(multipart, { limits: { fileSize: MAX_ARRIVAL_FILE_BYTES, files: MAX_FILES, fields: 20, parts: 40 } });

    const parserOr404 = (parserId: string) => {
      const parser = parsers.get(parserId);
      if (!parser) throw new ServiceError('not_found', `no parser ${JSON.stringify(parserId.slice(0, 80))}: GET ${EMULATOR_PREFIX}/parsers lists them`);
      return parser;
    };

    /** Reads every file part; a part over the size limit is a 413 that names the other route. */
    const filesOf = async (request: FastifyRequest) => {
      const files: Array<{ bytes: Buffer; fileName: string; declaredType: string }> = [];
      try {
        for await (const part of request.files()) {
          const bytes = await part.toBuffer();
          if (part.file.truncated) {
            throw new ServiceError('payload_too_large', `${part.filename} is over ${MAX_ARRIVAL_FILE_BYTES} bytes: send it through the API's upload-and-poll route`);
          }
          files.push({ bytes, fileName: part.filename || 'upload', declaredType: part.mimetype });
        }
      } catch (err) {
        // busboy reports a broken form as a plain Error: that is the sender's mistake, not ours.
        if (err instanceof ServiceError || (err as { statusCode?: number }).statusCode !== undefined) throw err;
        throw new ServiceError('invalid_request', `the multipart form is malformed (${(err as Error).message}): send each document as a file field`);
      }
      if (files.length === 0) throw new ServiceError('invalid_request', 'no file in the form: send the document as a multipart file field');
      return files;
    };

    const submitAll = async (parser: ParserConfig, files: Awaited<ReturnType<typeof filesOf>>, source: SourceType) => {
      const documents = [];
      for (const f of files) documents.push(await gateway.submitArrived(parser, { ...f, source }));
      return documents;
    };

    // The application's upload: what the web page's drop zone posts.
    app.post<{ Params: { parser_id: string } }>(`${EMULATOR_PREFIX}/parsers/:parser_id/documents`, async (request) => {
      const parser = parserOr404(request.params.parser_id);
      if (!request.isMultipart()) throw new ServiceError('unsupported_media_type', 'upload files as multipart/form-data');
      return { success: true, documents: await submitAll(parser, await filesOf(request), 'upload') };
    });

    // The inbound webhook: the address itself is the credential.
    app.post<{ Params: { parser_id: string; token: string } }>(`${INBOUND_PREFIX}/:parser_id/:token`, async (request) => {
      const parser = parsers.get(request.params.parser_id);
      if (!parser || !inbound.verify(parser.parser_id, request.params.token)) {
        throw new ServiceError('not_found', 'no inbound address here: copy the inbound URL that extract serve printed on start');
      }
      if (request.isMultipart()) {
        const docs = await submitAll(parser, await filesOf(request), 'webhook');
        return docs.length === 1 ? docs[0] : { success: true, documents: docs };
      }
      const { file } = parseBody(ExtractInlineRequest, request.body);
      return gateway.submitArrived(parser, { bytes: Buffer.from(file.data, 'base64'), fileName: file.name, declaredType: file.type, source: 'webhook' });
    });
  };
}
