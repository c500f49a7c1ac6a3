import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type FastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { DocumentStatus } from '../../contract/api.ts';
import { DeliveryState } from '../../contract/emulator.ts';
import { PACKAGE_ROOT } from '../../package-root.ts';
import { importEngine, resolveEngineFile } from '../../engine-package.ts';

// From the engine package (src/engine-package.ts).
const { default: fastifyStatic } = await importEngine<{ default: typeof FastifyStatic }>('@fastify/static');

/** Where the page's static files live: the package's top-level app/. */
export const APP_ROOT = join(PACKAGE_ROOT, 'app');

/** The prefix of the page's assets; the page itself is at `/`. */
const APP_PREFIX = '/_app/';

/** pdfjs-dist's browser build, its standard fonts and CMaps, served as they are installed (the page views PDFs with it). */
const PDFJS_PREFIX = '/_app/pdfjs/';
const PDFJS_ROOT = fileURLToPath(new URL('./', await resolveEngineFile('pdfjs-dist/package.json')));
const PDFJS_FILES = /^\/(?:build\/pdf(?:\.worker)?\.min\.mjs|standard_fonts\/[\w.-]+|cmaps\/[\w.-]+)$/;

/**
 * The page only loads its own files and talks to its own origin; data is always
 * written as text, and this policy makes an injected script or style inert anyway.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/**
 * The contract's enums as an ES module the page imports (`/_app/js/contract.js`), so that its
 * filters and badges list what the API says, not a copy written by hand.
 */
export const APP_CONTRACT = `// Made by extract serve from its contract (src/contract): do not copy these lists into the page.
export const DOCUMENT_STATUSES = ${JSON.stringify(DocumentStatus.options)};
export const DELIVERY_STATES = ${JSON.stringify(DeliveryState.options)};
`;

/**
 * The application of `extract serve`: one HTML page at `/` and its hand-written ES modules
 * and CSS under /_app/, served as they are shipped (no build step). The page reads and acts
 * on the emulator's own surface under /_emulator/.
 */
export function appRoutes(input: { root?: string } = {}) {
  const root = input.root ?? APP_ROOT;
  return async (app: FastifyInstance) => {
    await app.register(fastifyStatic, {
      root,
      prefix: APP_PREFIX,
      index: false,
      // A page that follows the installed package: revalidate each load (ETag), never serve a stale module.
      cacheControl: true,
      maxAge: 0,
      setHeaders: (reply) => reply.headers(SECURITY_HEADERS),
    });
    await app.register(fastifyStatic, {
      root: PDFJS_ROOT,
      prefix: PDFJS_PREFIX,
      index: false,
      decorateReply: false,
      cacheControl: true,
      maxAge: 0,
      // Only the browser build and its data, nothing else of the package.
      allowedPath: (path) => PDFJS_FILES.test(path),
      setHeaders: (reply) => reply.headers(SECURITY_HEADERS),
    });
    app.get(`${APP_PREFIX}js/contract.js`, async (_request, reply) =>
      reply.headers(SECURITY_HEADERS).type('text/javascript; charset=utf-8').send(APP_CONTRACT),
    );
    app.get('/', async (_request, reply) => reply.sendFile('index.html'));
  };
}
