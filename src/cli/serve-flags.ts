import { ExtractError } from '../errors.ts';

/** What `extract serve` is given on its command line (serve-command.ts declares it; serve-action.ts reads it). */
export type ServeFlags = {
  host: string;
  port: string;
  config?: string;
  dataDir?: string;
  inMemory?: boolean;
  printConfig?: boolean;
  smtpPort?: string;
  webhookTimeScale?: string;
  json?: boolean;
  quiet?: boolean;
  fault: string[];
  seed?: string;
  listen: boolean;
  listenPort: string;
};

export function parsePort(text: string, flag = '--port'): number {
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ExtractError(
      'usage',
      `${flag} ${JSON.stringify(text)} is not a port number: use 0-65535 (0 picks a free port)`,
    );
  }
  return port;
}

export function parseTimeScale(text: string): number {
  const scale = Number(text);
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new ExtractError(
      'usage',
      `--webhook-time-scale ${JSON.stringify(text)} is not a positive number: for example 0.001`,
    );
  }
  return scale;
}
