import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmulatorConfig, EmulatorConfigInput } from '../contract/index.ts';
import { errnoCode, hasErrno } from '../errno.ts';
import { ExtractError } from '../errors.ts';
import type { ServerEvent } from './events.ts';
import { type RunningServer, startServer } from './server.ts';

/** What `extract serve` runs, already parsed and checked by the CLI layer. */
export type EmulatorOptions = {
  /** A loaded configuration; the fault rules added by flags are checked by startServer. */
  config: Omit<EmulatorConfig, 'faults'> & { faults: EmulatorConfigInput['faults'] };
  host: string;
  port: number;
  smtpPort: number | false;
  /** Documents, ledger and the built-in receiver's inbox persist here; absent, everything lives in memory. */
  dataDir: string | undefined;
  /** The built-in webhook receiver's port, or false for none (--no-listen). */
  listenPort: number | false;
  log: (line: string) => void;
  events?: ((event: ServerEvent) => void) | undefined;
};

export type RunningEmulator = {
  server: RunningServer;
  /** The built-in receiver: its address and the file it writes each delivered event to. */
  receiver: { url: string; out: string } | undefined;
  close(): Promise<void>;
};

/**
 * The emulator with its built-in webhook receiver wired to the first parser, so the whole
 * loop works out of the box. A port in use or an address not of this machine is a usage
 * error naming the flag that fixes it.
 */
export async function serve(options: EmulatorOptions): Promise<RunningEmulator> {
  const config = { ...options.config };
  let receiver: Awaited<ReturnType<typeof _startBuiltInReceiver>> | undefined;
  let server: RunningServer;
  try {
    if (options.listenPort !== false) {
      receiver = await _startBuiltInReceiver({
        host: options.host,
        port: options.listenPort,
        dataDir: options.dataDir === undefined ? undefined : join(options.dataDir, 'inbox'),
        log: options.log,
      });
      const [first, ...rest] = config.parsers;
      config.parsers = [{ ...first!, webhooks: [...first!.webhooks, receiver.integration] }, ...rest];
    }
    server = await startServer({
      config,
      host: options.host,
      port: options.port,
      smtpPort: options.smtpPort,
      ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : { inMemory: true }),
      log: options.log,
      events: options.events,
    });
  } catch (err) {
    // Never started for anyone: no "received 0 ..." line before the reason.
    await receiver?.close({ silent: true });
    const code = errnoCode(err);
    if (code === 'EADDRINUSE')
      throw new ExtractError(
        'usage',
        `a port is in use (${(err as Error).message}): pick another with --port, --listen-port or --smtp-port (0 for a free one), or --no-listen`,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new ExtractError('usage', `cannot bind ${options.host}: use an address of this machine, such as 127.0.0.1`);
    throw err;
  }
  return {
    server,
    receiver: receiver && { url: receiver.url, out: receiver.out },
    async close() {
      await server.close();
      await receiver?.close();
    },
  };
}

/** The built-in receiver writes each event to its file (`out`), never to the process's stdout. */
const NO_STDOUT = new Writable({
  write: (_chunk, _encoding, done) => done(new Error('the built-in receiver writes to its file, not to stdout')),
});

/**
 * The webhook receiver `extract listen` would be, as one more integration of the first
 * parser: its token is new on every start and travels only inside this process.
 */
async function _startBuiltInReceiver(input: {
  host: string;
  port: number;
  dataDir: string | undefined;
  log: (line: string) => void;
}) {
  const { startReceiver } = await import('../receiver/index.ts');
  const dataDir = input.dataDir ?? mkdtempSync(join(tmpdir(), 'extract-serve-inbox-'));
  mkdirSync(dataDir, { recursive: true });
  const token = randomBytes(24).toString('hex');
  const out = join(dataDir, 'received.jsonl');
  let silent = false;
  const receiver = await startReceiver(
    {
      host: input.host,
      port: input.port,
      auth: { type: 'bearer', token },
      dataDir,
      out,
      log: (line) => {
        if (!silent) input.log(line);
      },
    },
    { stdout: NO_STDOUT },
  ).catch((err: unknown) => {
    // The receiver speaks of its own --port; here the flag is --listen-port.
    if (err instanceof ExtractError && hasErrno(err.cause, 'EADDRINUSE')) {
      throw new ExtractError(
        'usage',
        `the built-in receiver's port ${input.port} is in use: pick another with --listen-port (0 for a free one), or run without it: --no-listen`,
      );
    }
    throw err;
  });
  return {
    url: receiver.url,
    out,
    integration: {
      id: 'local-listener',
      url: receiver.url,
      method: 'POST' as const,
      auth: { type: 'bearer' as const, token },
    },
    /** `silent`: closed because serve did not start; its closing summary would only confuse. */
    async close(options: { silent?: boolean } = {}) {
      silent = options.silent === true;
      await receiver.close();
      if (input.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
