import Fastify from 'fastify';
import type { EmulatorConfig, EmulatorConfigInput } from '../contract/index.ts';
import type { Engine } from '../engine/types.ts';
import { createKeyRing } from './auth.ts';
import { realDeps, type EmulatorDeps } from './clock.ts';
import { resolveConfig } from './config.ts';
import { createDocuments } from './documents.ts';
import { createGateway, type Gateway } from './gateway.ts';
import { createLedger } from './ledger.ts';
import { createProcessor, type Processor } from './processor.ts';
import { apiRoutes } from './routes/api.ts';
import { emulatorRoutes } from './routes/emulator.ts';
import { installErrorHandling } from './routes/http.ts';
import { storageRoutes } from './routes/storage.ts';
import { openStore } from './store.ts';
import { createSigner } from './tickets.ts';
import { createUploads } from './uploads.ts';

export type ServeOptions = {
  config?: EmulatorConfigInput | EmulatorConfig;
  host?: string;
  port?: number;
  /** Documents, ledger and blobs persist here; without it (or with inMemory) they vanish on close. */
  dataDir?: string;
  inMemory?: boolean;
  /** Where the server's own lines go (errors of the emulator itself). */
  log?: (line: string) => void;
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
  gateway: Gateway;
  processor: Processor;
  close(): Promise<void>;
};

/** Starts `extract serve`: the store, the engine, the rules, and the HTTP routes over them. */
export async function startServer(options: ServeOptions = {}): Promise<RunningServer> {
  const config = resolveConfig(options.config);
  const deps: EmulatorDeps = { ...realDeps, ...options.deps };
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const store = openStore({ dataDir: options.dataDir, inMemory: options.inMemory });
  const engine = options.engine ?? (await import('../engine/index.ts')).createEngine();
  const documents = createDocuments(store.db);
  const ledger = createLedger(store.db, config.credits);
  const uploads = createUploads(store.db, store);
  const signer = createSigner(store.db);
  const parsers = new Map(config.parsers.map((p) => [p.parser_id, p]));
  const processor = createProcessor({ store, documents, ledger, engine, config, parsers, deps });
  const gateway = createGateway({ store, config, engine, documents, uploads, ledger, signer, processor, deps });
  const keys = createKeyRing(config.parsers);

  const app = Fastify({ logger: false, bodyLimit: config.inline.max_body_bytes, forceCloseConnections: true });
  installErrorHandling(app, log);
  await app.register(apiRoutes(gateway, keys, config.inline.max_body_bytes));
  await app.register(storageRoutes(gateway));
  await app.register(emulatorRoutes({ ledger, deps }));

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8787 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  gateway.resume();

  let closing: Promise<void> | undefined;
  return {
    url,
    config,
    apiKeys: config.parsers[0]!.api_keys,
    gateway,
    processor,
    close() {
      closing ??= (async () => {
        await app.close();
        await processor.close();
        if (!options.engine) await engine.close();
        store.close();
      })();
      return closing;
    },
  };
}
