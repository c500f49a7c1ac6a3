import { COMMON_FLAGS } from './common.ts';
import { CONNECTION_DEFAULTS, SERVE_PROFILES } from '../contract/constants.ts';
import { SERVE_DEFAULTS } from '../emulator/defaults.ts';
import { ExtractError } from '../errors.ts';
import { RECEIVER_DEFAULTS } from '../receiver/options.ts';
import { MISSING_MARKER_FLAGS, RUN_FLAGS } from './batch.ts';
import { defineFlags, type FlagValues } from './spec.ts';

/** The flags of the two servers, `extract serve` and `extract listen`, and the parsers of their values. */

/** The inbox of `extract listen`: beside the work, so a restart in the same place keeps deduplicating. */
const DEFAULT_INBOX_DIR = './.extract-inbox';

/** The one port rule of both servers (serve's --port, --smtp-port, --listen-port and listen's --port). */
function parsePort(text: string, flag = '--port'): number {
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ExtractError(
      'usage',
      `${flag} ${JSON.stringify(text)} is not a port number: use 0-65535 (0 picks a free port)`,
    );
  }
  return port;
}

function parseTimeScale(text: string): number {
  const scale = Number(text);
  if (!Number.isFinite(scale) || scale <= 0) {
    throw new ExtractError(
      'usage',
      `--webhook-time-scale ${JSON.stringify(text)} is not a positive number: for example 0.001`,
    );
  }
  return scale;
}

function parseSeed(text: string, flag: string): number {
  const seed = Number(text);
  if (!Number.isSafeInteger(seed)) throw new ExtractError('usage', `${flag} ${JSON.stringify(text)} is not an integer`);
  return seed;
}

/** A whole number in [min, max], or a usage error ending with `hint` (listen's own wording). */
function integerIn(min: number, max: number, hint: string): (text: string, flag: string) => number {
  return (text, flag) => {
    const n = Number(text);
    if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max)
      throw new ExtractError('usage', `${flag} ${JSON.stringify(text)} is not valid: ${hint}`);
    return n;
  };
}

const HOST = {
  kind: 'text',
  value: 'host',
  description: 'address to bind; anything but loopback is reachable from the network',
} as const;

const PORT = {
  kind: 'custom',
  value: 'port',
  description: 'port to listen on (0 picks a free one)',
  parse: parsePort,
} as const;

/** `extract serve`. */
export const SERVE_FLAGS = defineFlags({
  host: { ...HOST, default: SERVE_DEFAULTS.host },
  port: { ...PORT, default: String(SERVE_DEFAULTS.port) },
  config: { kind: 'path', value: 'file', description: 'configuration file (JSON); see --print-config' },
  // No default here: without the flag, the configuration's `profile` key decides (itself "interface" by default).
  profile: {
    kind: 'text',
    value: 'name',
    description:
      'the service to play: interface (what its interface describes; the default) or deployed (what its deployed application does; docs/serve-profiles.md)',
    choices: SERVE_PROFILES,
  },
  dataDir: {
    kind: 'path',
    value: 'dir',
    description: 'keep documents, ledger and uploads here across restarts',
    conflicts: 'inMemory',
  },
  inMemory: { kind: 'switch', description: 'keep nothing after the server stops (the default without --data-dir)' },
  smtpPort: { ...PORT, description: 'also take documents by email on this SMTP port (0 picks a free one)' },
  webhookTimeScale: {
    kind: 'custom',
    value: 'factor',
    description: 'multiply the webhook retry schedule (0.001 turns 5 min into 300 ms)',
    parse: parseTimeScale,
  },
  fault: {
    kind: 'list',
    value: 'spec',
    description:
      'inject a fault, OPERATION:PROBABILITY:EFFECT, e.g. extract-inline:0.1:503 (repeatable; docs/serve-limits.md)',
  },
  seed: {
    kind: 'custom',
    value: 'n',
    description: 'seed the fault draws so a faulty run is repeatable',
    parse: parseSeed,
  },
  json: { kind: 'switch', description: 'print requests and deliveries as NDJSON instead of lines' },
  quiet: { ...COMMON_FLAGS.quiet, description: 'print only the start-up lines and errors' },
  verbose: {
    ...COMMON_FLAGS.verbose,
    description: 'print every request and delivery (the default: taken so every command takes -q and -v)',
  },
  color: COMMON_FLAGS.color,
  listenPort: {
    ...PORT,
    description: 'port of the built-in webhook receiver (0 picks a free one)',
    default: String(SERVE_DEFAULTS.listenPort),
  },
  noListen: { kind: 'off', description: 'run no built-in webhook receiver' },
  printConfig: { kind: 'switch', description: 'print the built-in configuration and exit' },
});
export type ServeValues = FlagValues<typeof SERVE_FLAGS>;

/** `extract listen`. */
export const LISTEN_FLAGS = defineFlags({
  host: { ...HOST, default: RECEIVER_DEFAULTS.host },
  port: { ...PORT, default: String(RECEIVER_DEFAULTS.port) },
  path: {
    kind: 'text',
    value: 'path',
    description: 'path events are accepted on (POST or PUT)',
    default: RECEIVER_DEFAULTS.path,
  },
  auth: {
    kind: 'text',
    value: 'type',
    description: 'none, bearer or basic (default: from the credentials given, else none)',
  },
  token: {
    kind: 'text',
    value: 'token',
    description: 'bearer token; prefer EXTRACT_LISTEN_TOKEN, flags are visible in ps',
  },
  user: { kind: 'text', value: 'user', description: 'basic authentication user name' },
  password: {
    kind: 'text',
    value: 'password',
    description: 'basic authentication password; prefer EXTRACT_LISTEN_PASSWORD',
  },
  dataDir: {
    kind: 'path',
    value: 'dir',
    description: 'inbox (deduplication across restarts) and review.jsonl',
    default: DEFAULT_INBOX_DIR,
  },
  out: {
    kind: 'path',
    short: 'o',
    value: 'path',
    description:
      'where records are appended: - (stdout, JSON Lines), FILE.jsonl, FILE.csv (one header) or DIR/ (one JSON per document)',
  },
  format: { kind: 'text', value: 'format', description: 'jsonl, csv or dir; overrides the extension of -o' },
  noFormulaProtection: RUN_FLAGS.noFormulaProtection,
  ...MISSING_MARKER_FLAGS,
  maxBody: {
    kind: 'custom',
    value: 'bytes',
    description: 'bodies larger than this are answered 413',
    default: String(RECEIVER_DEFAULTS.maxBodyBytes),
    parse: integerIn(1, Number.MAX_SAFE_INTEGER, 'give a size in bytes, such as 5242880'),
  },
  maxConnections: {
    kind: 'custom',
    value: 'n',
    description:
      'connections open at once; past it the one idle longest is closed, or a new one gets 503 when all are busy',
    default: String(CONNECTION_DEFAULTS.maxConnections),
    parse: integerIn(1, 1_000_000, 'give a number of connections, such as 512'),
  },
  json: { kind: 'switch', description: 'log lines (stderr) as NDJSON' },
  quiet: {
    ...COMMON_FLAGS.quiet,
    description: 'print only the start-up lines, errors and refused requests: no line per event received',
  },
  verbose: {
    ...COMMON_FLAGS.verbose,
    description: 'print a line per event received (the default: taken so every command takes -q and -v)',
  },
  color: COMMON_FLAGS.color,
});
export type ListenValues = FlagValues<typeof LISTEN_FLAGS>;
