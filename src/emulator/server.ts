import { boundedServer, listeningUrl } from '../net/connections.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EmulatorConfig, EmulatorConfigInput } from '../contract/index.ts';
import type { Engine } from '../engine/types.ts';
import { startEmailArrivals, type EmailArrivals } from './arrivals/email.ts';
import { createInboundTokens, INBOUND_PREFIX } from './arrivals/inbound.ts';
import { createKeyRing } from './auth.ts';
import { realDeps, type EmulatorDeps } from './clock.ts';
import { resolveConfig } from './config.ts';
import { SERVE_DEFAULTS } from './defaults.ts';
import { createDocuments } from './documents.ts';
import type { ServerEvent } from './events.ts';
import { Intake } from './arrivals/intake.ts';
import { Gateway } from './gateway.ts';
import { createPageCounter } from './pages.ts';
import { createLedger } from './ledger.ts';
import { Processor } from './processor.ts';
import { apiRoutes } from './routes/api.ts';
import { FinishedBodies } from './finished-bodies.ts';
import { fastReads } from './routes/fast-reads.ts';
import { appRoutes } from './routes/app.ts';
import { arrivalRoutes } from './routes/arrivals.ts';
import { emulatorRoutes } from './routes/emulator.ts';
import { Surface } from './surface.ts';
import {
  documentOf,
  frameworkErrors,
  installDocumentNotes,
  installErrorHandling,
  installLoopbackGuard,
  installWwwRedirect,
} from './routes/http.ts';
import { storageRoutes } from './routes/storage.ts';
import { openStore, type Store } from './store.ts';
import { createSigner } from './tickets.ts';
import { createUploads } from './uploads.ts';
import { createFaults, type Faults } from './faults.ts';
import { Idempotency } from './idempotency.ts';
import { faultRoutes, installFaults } from './routes/faults.ts';
import { createWebhooks, type Webhooks } from './webhooks/index.ts';
import { Cleanup } from './cleanup.ts';
import { profileOf } from './profile.ts';

export type ServeOptions = {
  config?: EmulatorConfigInput | EmulatorConfig;
  host?: string;
  port?: number;
  /** Documents, ledger, outbox and blobs persist here; without it (or with inMemory) they vanish on close. */
  dataDir?: string;
  inMemory?: boolean;
  /** SMTP port for documents by email; false (the default) runs no SMTP listener, 0 picks a free port. */
  smtpPort?: number | false;
  /** Errors of the emulator itself (the CLI passes its stderr; without one the emulator is silent: nothing here writes to the process's streams). */
  log?: (line: string) => void;
  /** One entry per API request and per delivery attempt. */
  events?: (event: ServerEvent) => void;
  deps?: Partial<EmulatorDeps>;
  /** An engine to use instead of the worker-thread one (tests of the emulator's rules). */
  engine?: Engine;
};

export type RunningServer = {
  /** Base URL of the emulated service, e.g. http://127.0.0.1:8787 */
  url: string;
  config: EmulatorConfig;
  /** API keys of the first parser, for the user's first request. */
  apiKeys: string[];
  /** The inbound webhook address of each parser. */
  inboundUrls: Map<string, string>;
  smtpPort: number | null;
  gateway: Gateway;
  processor: Processor;
  webhooks: Webhooks;
  faults: Faults;
  close(): Promise<void>;
};

/** Starts `extract serve`: the store, the engine, the rules, and the HTTP routes over them. */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const config = resolveConfig(options.config);
  const deps: EmulatorDeps = { ...realDeps, ...options.deps };
  const log = options.log ?? (() => {});
  const emit = options.events;
  const store = openStore({ dataDir: options.dataDir, inMemory: options.inMemory });
  const engine =
    options.engine ??
    new (await import('../engine/index.ts')).EnginePool({
      memoryMb: config.processing.engine_memory_mb,
      slowMs: config.processing.slow_ms,
    });
  const modules = wireModules({ config, deps, store, engine, log, emit });
  const { gateway, processor, webhooks, faults, intake, parsers, inbound, cleanup } = modules;
  const host = options.host ?? SERVE_DEFAULTS.host;
  const app = await buildApp(modules, { config, deps, store, host, log, emit });

  const port = options.port ?? SERVE_DEFAULTS.port;
  await app.listen({ host, port });
  const url = listeningUrl(app.server, host, port);

  let email: EmailArrivals | undefined;
  if (options.smtpPort !== undefined && options.smtpPort !== false) {
    email = await startEmailArrivals({
      intake,
      partialDir: store.partialDir,
      parsers,
      host,
      port: options.smtpPort,
      log,
    });
  }
  gateway.resume();
  webhooks.start();

  let closing: Promise<void> | undefined;
  return {
    url,
    config,
    apiKeys: config.parsers[0]!.api_keys,
    inboundUrls: new Map(
      config.parsers.map((p) => [
        p.parser_id,
        `${url}${INBOUND_PREFIX}/${p.parser_id}/${inbound.tokenFor(p.parser_id)}`,
      ]),
    ),
    smtpPort: email?.port ?? null,
    gateway,
    processor,
    webhooks,
    faults,
    close() {
      closing ??= (async () => {
        // The engine's processes first, whatever they read (a bomb may take minutes): the documents
        // they held stay processing, and resume() queues them again on the next start.
        processor.stop();
        cleanup.close();
        if (!options.engine) await engine.close();
        await email?.close();
        await app.close();
        await processor.close();
        await webhooks.close();
        store.close();
      })();
      return closing;
    },
  };
}

type Wiring = {
  config: EmulatorConfig;
  deps: EmulatorDeps;
  store: Store;
  engine: Engine;
  log: (line: string) => void;
  emit: ((event: ServerEvent) => void) | undefined;
};

/** The rule-holding modules over one store and engine, each handed only what it uses. */
function wireModules({ config, deps, store, engine, log, emit }: Wiring) {
  const profile = profileOf(config);
  const documents = createDocuments(store.db);
  const ledger = createLedger(store.db, config.credits);
  const uploads = createUploads(store.db, store);
  const signer = createSigner(store.db);
  const parsers = new Map(config.parsers.map((p) => [p.parser_id, p]));
  const faults = createFaults({ rules: config.faults.rules, seed: config.faults.seed, deps });
  const webhooks = createWebhooks({ db: store.db, config, profile, deps, faults, log: (event) => emit?.(event) });
  const processor = new Processor({
    store,
    documents,
    ledger,
    engine,
    config,
    parsers,
    deps,
    onFinishedInTransaction: webhooks.enqueue,
    log,
  });
  processor.onFinished(() => webhooks.flush());
  const cleanup = new Cleanup({
    refund: (documentId) =>
      processor.abandon(
        documentId,
        'the function was stopped at its time limit; the clean-up job failed the document and refunded its credits',
      ),
    now: deps.now,
  });
  const countPages = createPageCounter(engine, { maxPages: config.processing.max_pages });
  const gateway = new Gateway({
    store,
    config,
    countPages,
    documents,
    uploads,
    ledger,
    signer,
    processor,
    deps,
    profile,
    cleanup,
  });
  const intake = new Intake({ parsers, store, documents, ledger, processor, faults, countPages, deps });
  return {
    profile,
    cleanup,
    documents,
    ledger,
    parsers,
    faults,
    webhooks,
    processor,
    gateway,
    intake,
    inbound: createInboundTokens(store.db),
    keys: createKeyRing(config.parsers),
    idempotency: new Idempotency(store.db, { honoured: config.idempotency_key && profile.idempotencyKey }),
  };
}

/** The HTTP surface: error handling, the loopback guard and faults first, then every route group. */
async function buildApp(
  m: ReturnType<typeof wireModules>,
  { config, deps, store, host, log, emit }: Omit<Wiring, 'engine'> & { host: string },
): Promise<FastifyInstance> {
  const bounded = boundedServer(
    {
      maxConnections: config.connections.max,
      idleTimeoutMs: config.connections.idle_timeout_ms,
      headersTimeoutMs: config.connections.headers_timeout_ms,
    },
    log,
  );
  // Finished documents' bodies, kept by the document route; the server answers plain reads of
  // them itself (routes/fast-reads.ts), unless requests are logged.
  const kept = new FinishedBodies();
  const reads = fastReads({ kept, keys: m.keys, faults: m.faults, boundHost: host });
  const app = Fastify({
    logger: false,
    bodyLimit: config.inline.max_body_bytes,
    forceCloseConnections: true,
    frameworkErrors,
    serverFactory: (handler) => bounded(emit ? handler : reads(handler)),
  });
  installErrorHandling(app, log, m.profile);
  installDocumentNotes(app);
  installLoopbackGuard(app, host);
  if (m.profile.redirectWww) installWwwRedirect(app);
  installFaults(app, m.faults, deps, m.keys);
  // Only when someone listens: the hook costs every request a little.
  if (emit) {
    // A callback hook (no promise per request), as the others on the read path.
    app.addHook('onResponse', (request, reply, done) => {
      emit({
        type: 'request',
        at: new Date(deps.now()).toISOString(),
        method: request.method,
        path: request.url.split('?')[0]!,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        document_id: documentOf(request),
      });
      done();
    });
  }
  await app.register(
    apiRoutes({
      gateway: m.gateway,
      keys: m.keys,
      idempotency: m.idempotency,
      profile: m.profile,
      now: deps.now,
      finished: kept,
    }),
  );
  await app.register(storageRoutes(m.gateway));
  await app.register(
    arrivalRoutes({ intake: m.intake, parsers: m.parsers, inbound: m.inbound, partialDir: store.partialDir }),
  );
  await app.register(appRoutes());
  await app.register(faultRoutes(m.faults));
  await app.register(
    emulatorRoutes({
      ledger: m.ledger,
      surface: new Surface({
        documents: m.documents,
        integrations: m.webhooks.integrations,
        parsers: config.parsers,
        blobDir: store.blobDir,
      }),
      webhooks: m.webhooks,
      deps,
    }),
  );
  return app;
}
