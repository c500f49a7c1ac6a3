import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from './default-config.ts';
import { loadConfig } from './config.ts';
import { formatEvent } from './events.ts';
import { parseFaultFlag } from './faults.ts';
import { startServer } from './server.ts';
import { ExtractError } from '../errors.ts';
import { parsePort, parseTimeScale, type ServeFlags } from '../cli/serve-command.ts';
import { errnoCode, hasErrno } from '../errno.ts';

type Out = { write(text: string): unknown };
export type ServeDeps = { stdout: Out; stderr: Out; signals: NodeJS.EventEmitter };

function parseFault(spec: string) {
  try {
    return parseFaultFlag(spec);
  } catch (err) {
    throw new ExtractError('usage', (err as Error).message);
  }
}

function parseSeed(text: string): number {
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new ExtractError('usage', `--seed ${JSON.stringify(text)} is not an integer`);
  return seed;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/**
 * Runs the emulator until SIGINT or SIGTERM. The first stdout line is always
 * "Listening on <base URL>" so scripts can read the address when --port is 0; then one
 * line (or NDJSON object) per API request and per webhook delivery attempt.
 */
export async function serve(flags: ServeFlags, deps: ServeDeps): Promise<void> {
  if (flags.printConfig) {
    deps.stdout.write(`${JSON.stringify(DEFAULT_CONFIG, null, 2)}\n`);
    return;
  }
  const port = parsePort(flags.port);
  const smtpPort = flags.smtpPort === undefined ? false : parsePort(flags.smtpPort, '--smtp-port');
  const loaded = await loadConfig(flags.config);
  const config = {
    ...loaded,
    webhook_delivery: {
      ...loaded.webhook_delivery,
      ...(flags.webhookTimeScale !== undefined && { time_scale: parseTimeScale(flags.webhookTimeScale) }),
    },
    faults: {
      seed: flags.seed === undefined ? loaded.faults.seed : parseSeed(flags.seed),
      rules: [...loaded.faults.rules, ...flags.fault.map(parseFault)],
    },
  };
  const persistent = flags.dataDir !== undefined && !flags.inMemory;
  const say = (line: string) => deps.stdout.write(`${line}\n`);
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  let receiver: Awaited<ReturnType<typeof startBuiltInReceiver>> | undefined;
  try {
    if (flags.listen) {
      receiver = await startBuiltInReceiver({
        host: flags.host,
        port: parsePort(flags.listenPort, '--listen-port'),
        dataDir: persistent ? join(flags.dataDir!, 'inbox') : undefined,
        log: (line) => deps.stderr.write(`${line}\n`),
      });
      const [first, ...rest] = config.parsers;
      config.parsers = [{ ...first!, webhooks: [...first!.webhooks, receiver.integration] }, ...rest];
    }
    server = await startServer({
      config,
      host: flags.host,
      port,
      smtpPort,
      ...(persistent ? { dataDir: flags.dataDir } : { inMemory: true }),
      log: (line) => deps.stderr.write(`${line}\n`),
      events: flags.quiet
        ? undefined
        : (e) => deps.stdout.write(`${flags.json ? JSON.stringify(e) : formatEvent(e)}\n`),
    });
  } catch (err) {
    await receiver?.close();
    const code = errnoCode(err);
    if (code === 'EADDRINUSE')
      throw new ExtractError(
        'usage',
        `a port is in use (${(err as Error).message}): pick another with --port, --listen-port or --smtp-port (0 for a free one), or --no-listen`,
      );
    if (code === 'EADDRNOTAVAIL')
      throw new ExtractError('usage', `cannot bind ${flags.host}: use an address of this machine, such as 127.0.0.1`);
    throw err;
  }
  say(`Listening on ${server.url}`);
  say(`App: ${server.url}/ (documents, upload, parsers, credits, webhooks, faults)`);
  say(`Data: ${persistent ? flags.dataDir : 'in memory (gone when the server stops; keep it with --data-dir)'}`);
  for (const parser of server.config.parsers) {
    say(`Parser "${parser.parser_name}" (${parser.parser_id}) API key: ${parser.api_keys.join(', ')}`);
    say(`  inbound webhook: ${server.inboundUrls.get(parser.parser_id)}`);
    if (server.smtpPort !== null)
      say(`  email: ${parser.parser_id}@localhost via SMTP ${flags.host}:${server.smtpPort}`);
  }
  for (const i of server.webhooks.integrations.values())
    say(`Webhook ${i.id}: ${i.method} ${i.url} (auth ${i.auth.type})`);
  if (receiver)
    say(
      `Receiver: ${receiver.url} writes each delivered event to ${receiver.out} (extract listen, built in; --no-listen turns it off)`,
    );
  for (const r of server.faults.list())
    say(`Fault ${r.id}: ${r.operation} p=${r.probability} ${JSON.stringify(r.effect)}`);
  say(`Try: EXTRACT_BASE_URL=${server.url} EXTRACT_API_KEY=${server.apiKeys[0]} extract fixtures/invoices/*.pdf`);
  if (!LOOPBACK.test(flags.host)) {
    deps.stderr.write(
      `warning: bound to ${flags.host}, not loopback: anyone who can reach this machine can use the emulator\n`,
    );
  }
  await Promise.race([once(deps.signals, 'SIGINT'), once(deps.signals, 'SIGTERM')]);
  deps.stderr.write('stopping...\n');
  await server.close();
  await receiver?.close();
}

/**
 * The webhook receiver `extract listen` would be, wired to the first parser as one more
 * integration, so the whole loop works out of the box: its token is new on every start
 * and travels only inside this process.
 */
async function startBuiltInReceiver(input: {
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
  const receiver = await startReceiver({
    host: input.host,
    port: input.port,
    auth: { type: 'bearer', token },
    dataDir,
    out,
    log: input.log,
  }).catch((err: unknown) => {
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
    async close() {
      await receiver.close();
      if (input.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
