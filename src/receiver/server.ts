import { DEFAULT_MISSING_MARKER } from '../outputs/missing-marker.ts';
import { CONNECTION_DEFAULTS } from '../contract/constants.ts';
import { listeningUrl } from '../net/connections.ts';
import type { FastifyInstance } from 'fastify';
import { errnoCode } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import { createAuthenticator } from './auth.ts';
import { groupAppend } from './group-append.ts';
import { Inbox } from './inbox.ts';
import { createLogger } from './log.ts';
import {
  RECEIVER_DEFAULTS,
  type ReceiverDeps,
  type ReceiverOptions,
  type ReceiverStats,
  type RunningReceiver,
} from './options.ts';
import { receiverApp } from './routes.ts';
import { createSink, type RecordSink } from './sink.ts';
import { createWorker, type WorkerCounts } from './worker.ts';

/** File outputs are fsynced once per pass; spacing passes keeps those fsyncs from crowding the acknowledgements'. */
const FILE_SPACING_MS = 25;

/**
 * `extract listen`: a receiver of document.processed events (spec, "Events"). The reply is
 * sent once the raw event is durably in the inbox and nothing more (spec, "Delivery rules"
 * 2: answer 200 at once, work afterwards); deduplication and outputs follow in the worker.
 */
export async function startReceiver(
  options: ReceiverOptions,
  deps: Partial<ReceiverDeps> & Pick<ReceiverDeps, 'stdout'>,
): Promise<RunningReceiver> {
  // stdout is the caller's (cli/ passes the process's): this module never reaches for it.
  const { now, stdout, cwd }: ReceiverDeps = { now: () => new Date(), cwd: process.cwd(), ...deps };
  const host = options.host ?? RECEIVER_DEFAULTS.host;
  const path = _normalisePath(options.path ?? RECEIVER_DEFAULTS.path);
  const logger = createLogger(options.log, options.json ?? false, options.quiet ?? false);

  // Output problems (a typo in -o) surface before anything is acknowledged.
  const sink = await createSink({
    out: options.out,
    format: options.format,
    cwd,
    stdout,
    dataDir: options.dataDir,
    warn: (message) => logger({ type: 'error', message }),
    formulaProtection: options.formulaProtection,
    pageBytes: options.batchBytes,
  });
  const inbox = Inbox.open(options.dataDir);
  const stats: ReceiverStats = { received: 0, duplicates: 0, kept: 0, tests: 0, rejected: 0, unauthorized: 0 };
  const counts: WorkerCounts = { new: 0, duplicates: 0, kept: 0 };
  const worker = createWorker({
    inbox,
    sink,
    logger,
    now,
    counts,
    delayMs: options.workerDelayMs ?? 0,
    batchBytes: options.batchBytes,
    missingMarker: options.missingMarker === undefined ? DEFAULT_MISSING_MARKER : options.missingMarker,
    spacingMs: sink.toDisk ? FILE_SPACING_MS : 0,
  });

  const app = receiverApp({
    path,
    host,
    maxBodyBytes: options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
    connections: {
      ...CONNECTION_DEFAULTS,
      maxConnections: options.maxConnections ?? CONNECTION_DEFAULTS.maxConnections,
    },
    now,
    logger,
    authenticator: createAuthenticator(options.auth),
    inbox,
    append: groupAppend(inbox),
    worker,
    stats,
  });
  const port = options.port ?? RECEIVER_DEFAULTS.port;
  await listen(app, { sink, inbox, host, port });
  // What a previous run acknowledged but did not process.
  worker.kick();

  const url = `${listeningUrl(app.server, host, port)}${path}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    stats: () => ({ ...stats, duplicates: counts.duplicates, kept: counts.kept }),
    drained: () => worker.idle(),
    close() {
      closing ??= (async () => {
        await app.close();
        await worker.stop();
        inbox.close();
        logger({ type: 'summary', ...stats, duplicates: counts.duplicates, kept: counts.kept, new: counts.new });
      })();
      return closing;
    },
  };
}

/** Starts the outputs and binds; on failure nothing is left open, and a busy port or a foreign address is a usage error. */
async function listen(
  app: FastifyInstance,
  at: { sink: RecordSink; inbox: Inbox; host: string; port: number },
): Promise<void> {
  try {
    await at.sink.start(at.inbox);
    await app.listen({ host: at.host, port: at.port });
  } catch (err) {
    await app.close();
    at.inbox.close();
    const code = errnoCode(err);
    if (code === 'EADDRINUSE') {
      throw new ExtractError(
        'usage',
        `port ${at.port} is in use: pick another with --port, or --port 0 for a free one`,
        {
          cause: err,
        },
      );
    }
    if (code === 'EADDRNOTAVAIL') {
      throw new ExtractError('usage', `cannot bind ${at.host}: use an address of this machine, such as 127.0.0.1`, {
        cause: err,
      });
    }
    throw err;
  }
}

function _normalisePath(path: string): string {
  const withSlash = path.startsWith('/') ? path : `/${path}`;
  return withSlash.length > 1 && withSlash.endsWith('/') ? withSlash.slice(0, -1) : withSlash;
}
