import type { Command } from 'commander';
import { addFlags } from '../flags/commander.ts';
import { parseFlags } from '../flags/parse.ts';
import { SERVE_FLAGS } from '../flags/servers.ts';

/** `extract serve`: the local emulation of the service. The action only forwards. */
export function registerServe(program: Command): void {
  const serve = program
    .command('serve')
    .description(
      'run a local emulation of the extraction service: API, signed uploads, credits, background extraction, webhooks, email and inbound arrivals, fault injection, and its web application at /',
    );
  addFlags(serve, SERVE_FLAGS).action(async (raw: Record<string, unknown>) => {
    const flags = parseFlags(SERVE_FLAGS, raw);
    const { serveFromCli } = await import('./serve-action.ts');
    await serveFromCli(flags, { stdout: process.stdout, stderr: process.stderr, signals: process });
  });
}
