import { type Command, Option } from 'commander';
import { ExtractError } from '../errors.ts';

export type ServeFlags = {
  host: string;
  port: string;
  config?: string;
  dataDir?: string;
  inMemory?: boolean;
  printConfig?: boolean;
};

/** `extract serve`: the local emulation of the service. The action only forwards. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a local emulation of the extraction service (API, signed uploads, credits, background extraction)')
    .option('--host <host>', 'address to bind; anything but loopback is reachable from the network', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 picks a free one)', '8787')
    .option('--config <file>', 'configuration file (JSON); see --print-config')
    .addOption(new Option('--data-dir <dir>', 'keep documents, ledger and uploads here across restarts').conflicts('inMemory'))
    .option('--in-memory', 'keep nothing after the server stops (the default without --data-dir)')
    .option('--print-config', 'print the built-in configuration and exit')
    .action(async (flags: ServeFlags) => {
      const { serve } = await import('./commands/serve.ts');
      await serve(flags, { stdout: process.stdout, stderr: process.stderr, signals: process });
    });
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ExtractError('usage', `--port ${JSON.stringify(text)} is not a port number: use 0-65535 (0 picks a free port)`);
  }
  return port;
}
