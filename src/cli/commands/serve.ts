import { once } from 'node:events';
import { DEFAULT_CONFIG } from '../../emulator/default-config.ts';
import { loadConfig } from '../../emulator/config.ts';
import { startServer } from '../../emulator/server.ts';
import { ExtractError } from '../../errors.ts';
import { parsePort, type ServeFlags } from '../serve.ts';

type Out = { write(text: string): unknown };
export type ServeDeps = { stdout: Out; stderr: Out; signals: NodeJS.EventEmitter };

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/**
 * Runs the emulator until SIGINT or SIGTERM. The first stdout line is always
 * "Listening on <base URL>" so scripts can read the address when --port is 0.
 */
export async function serve(flags: ServeFlags, deps: ServeDeps): Promise<void> {
  if (flags.printConfig) {
    deps.stdout.write(`${JSON.stringify(DEFAULT_CONFIG, null, 2)}\n`);
    return;
  }
  const port = parsePort(flags.port);
  const config = await loadConfig(flags.config);
  let server;
  try {
    server = await startServer({
      config,
      host: flags.host,
      port,
      ...(flags.dataDir !== undefined && !flags.inMemory ? { dataDir: flags.dataDir } : { inMemory: true }),
      log: (line) => deps.stderr.write(`${line}\n`),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ExtractError('usage', `port ${port} is in use: pick another with --port, or --port 0 for a free one`);
    if (code === 'EADDRNOTAVAIL') throw new ExtractError('usage', `cannot bind ${flags.host}: use an address of this machine, such as 127.0.0.1`);
    throw err;
  }
  deps.stdout.write(`Listening on ${server.url}\n`);
  deps.stdout.write(`Data: ${flags.dataDir && !flags.inMemory ? flags.dataDir : 'in memory (gone when the server stops; keep it with --data-dir)'}\n`);
  for (const parser of server.config.parsers) {
    deps.stdout.write(`Parser "${parser.parser_name}" (${parser.parser_id}) API key: ${parser.api_keys.join(', ')}\n`);
  }
  deps.stdout.write(`Try: EXTRACT_BASE_URL=${server.url} EXTRACT_API_KEY=${server.apiKeys[0]} extract fixtures/invoices/*.pdf\n`);
  if (!LOOPBACK.test(flags.host)) {
    deps.stderr.write(`warning: bound to ${flags.host}, not loopback: anyone who can reach this machine can use the emulator\n`);
  }
  await Promise.race([once(deps.signals, 'SIGINT'), once(deps.signals, 'SIGTERM')]);
  deps.stderr.write('stopping...\n');
  await server.close();
}
