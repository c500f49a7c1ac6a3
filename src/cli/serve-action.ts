import { once } from 'node:events';
import type { EmulatorConfig } from '../contract/index.ts';
import { DEFAULT_CONFIG } from '../emulator/default-config.ts';
import { loadConfig } from '../emulator/config.ts';
import { formatEvent } from '../emulator/events.ts';
import { serve } from '../emulator/serve.ts';
import { parseFaultFlag } from '../emulator/faults.ts';
import { requireEngine } from '../engine-package.ts';
import { ExtractError } from '../errors.ts';
import { isLoopbackHost } from '../net/loopback.ts';
import type { ServeValues } from '../flags/servers.ts';
import { verbosityOf } from './verbosity.ts';

type Out = { write(text: string): unknown };
export type ServeDeps = { stdout: Out; stderr: Out; signals: NodeJS.EventEmitter };

/**
 * `extract serve`: runs the emulator until SIGINT or SIGTERM. The first stdout line is always
 * "Listening on <base URL>" so scripts can read the address when --port is 0; then one
 * line (or NDJSON object) per API request and per webhook delivery attempt.
 */
export async function serveFromCli(_args: [], flags: ServeValues, deps: ServeDeps): Promise<void> {
  verbosityOf(flags);
  if (flags.printConfig) {
    deps.stdout.write(`${JSON.stringify(DEFAULT_CONFIG, null, 2)}\n`);
    return;
  }
  // Without the engine package: one line with the command that installs it, exit 2, before any work.
  requireEngine('serve');
  const port = flags.port;
  const smtpPort = flags.smtpPort ?? false;
  const listenPort = flags.noListen ? false : flags.listenPort;
  const loaded = await loadConfig(flags.config);
  const config = {
    ...loaded,
    ...(flags.profile !== undefined && { profile: flags.profile }),
    webhook_delivery: {
      ...loaded.webhook_delivery,
      ...(flags.webhookTimeScale !== undefined && { time_scale: flags.webhookTimeScale }),
    },
    faults: {
      seed: flags.seed ?? loaded.faults.seed,
      rules: [...loaded.faults.rules, ...flags.fault.map(parseFault)],
    },
  };
  const dataDir = flags.dataDir !== undefined && !flags.inMemory ? flags.dataDir : undefined;
  const say = (line: string) => deps.stdout.write(`${line}\n`);
  const { server, receiver, close } = await serve({
    config,
    host: flags.host,
    port,
    smtpPort,
    dataDir,
    listenPort,
    log: (line) => deps.stderr.write(`${line}\n`),
    events: flags.quiet ? undefined : (e) => deps.stdout.write(`${flags.json ? JSON.stringify(e) : formatEvent(e)}\n`),
  });
  say(`Listening on ${server.url}`);
  say(`App: ${server.url}/ (documents, upload, parsers, credits, webhooks, faults)`);
  say(`Profile: ${profileLine(server.config)}`);
  say(`Data: ${dataDir ?? 'in memory (gone when the server stops; keep it with --data-dir)'}`);
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
  if (!isLoopbackHost(flags.host)) {
    deps.stderr.write(
      `warning: bound to ${flags.host}, not loopback: anyone who can reach this machine can use the emulator\n`,
    );
  }
  await Promise.race([once(deps.signals, 'SIGINT'), once(deps.signals, 'SIGTERM')]);
  deps.stderr.write('stopping...\n');
  await close();
}

/** The start-up line that says which service is played, and the deployed one's limits. */
function profileLine(config: EmulatorConfig): string {
  if (config.profile === 'interface')
    return 'interface (as the service interface describes it; --profile deployed plays the deployed application)';
  const d = config.deployed;
  return `deployed (inline POST /api/v1/extract only; body at most ${d.max_body_bytes} bytes, ${d.function_timeout_ms} ms a request, refunds of stopped requests after ${d.cleanup_after_ms} ms; docs/serve-profiles.md)`;
}

function parseFault(spec: string) {
  try {
    return parseFaultFlag(spec);
  } catch (err) {
    throw new ExtractError('usage', (err as Error).message);
  }
}
