import { type Command, Option } from 'commander';
import { SERVE_DEFAULTS } from '../emulator/defaults.ts';
import type { ServeFlags } from './serve-flags.ts';

/** `extract serve`: the local emulation of the service. The action only forwards. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'run a local emulation of the extraction service: API, signed uploads, credits, background extraction, webhooks, email and inbound arrivals, fault injection, and its web application at /',
    )
    .option(
      '--host <host>',
      'address to bind; anything but loopback is reachable from the network',
      SERVE_DEFAULTS.host,
    )
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(SERVE_DEFAULTS.port))
    .option('--config <file>', 'configuration file (JSON); see --print-config')
    .addOption(
      new Option('--data-dir <dir>', 'keep documents, ledger and uploads here across restarts').conflicts('inMemory'),
    )
    .option('--in-memory', 'keep nothing after the server stops (the default without --data-dir)')
    .option('--smtp-port <port>', 'also take documents by email on this SMTP port (0 picks a free one)')
    .option('--webhook-time-scale <factor>', 'multiply the webhook retry schedule (0.001 turns 5 min into 300 ms)')
    .option(
      '--fault <spec>',
      'inject a fault, OPERATION:PROBABILITY:EFFECT, e.g. extract-inline:0.1:503 (repeatable; docs/serve-limits.md)',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--seed <n>', 'seed the fault draws so a faulty run is repeatable')
    .option('--json', 'print requests and deliveries as NDJSON instead of lines')
    .option('-q, --quiet', 'print only the start-up lines and errors')
    .option(
      '--listen-port <port>',
      'port of the built-in webhook receiver (0 picks a free one)',
      String(SERVE_DEFAULTS.listenPort),
    )
    .option('--no-listen', 'run no built-in webhook receiver')
    .option('--print-config', 'print the built-in configuration and exit')
    .action(async (flags: ServeFlags) => {
      const { serveFromCli } = await import('./serve-action.ts');
      await serveFromCli(flags, { stdout: process.stdout, stderr: process.stderr, signals: process });
    });
}
