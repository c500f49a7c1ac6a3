import { verbosityOf } from './verbosity.ts';
import { once } from 'node:events';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { ListenValues } from '../flags/servers.ts';
import { ExtractError } from '../errors.ts';
import type { ReceiverAuth } from '../receiver/options.ts';
import { startReceiver } from '../receiver/server.ts';
import { missingMarkerOf } from './stored-settings.ts';
import { ensureToken } from '../receiver/token.ts';
import { isLoopbackHost } from '../net/loopback.ts';
import { visibleSecretNote } from './secret-flags.ts';

export type ListenDeps = {
  stdout: Writable;
  stderr: { write(text: string): unknown };
  signals: NodeJS.EventEmitter;
  env: NodeJS.ProcessEnv;
  cwd: string;
};

/** Environment variables that keep secrets off the command line, where `ps` shows them. */
export const ENV = {
  token: 'EXTRACT_LISTEN_TOKEN',
  password: 'EXTRACT_LISTEN_PASSWORD',
  /** Tests only: hold processing this long after an acknowledgement (see ReceiverOptions.workerDelayMs). */
  workerDelay: 'EXTRACT_LISTEN_WORKER_DELAY_MS',
  /** Tests only: the worker's byte budget (ReceiverOptions.batchBytes), small to make a run of many batches. */
  batchBytes: 'EXTRACT_LISTEN_BATCH_BYTES',
} as const;

/** The door of `extract listen` (cli/commands.ts): it takes no arguments. */
export const listenFromCli = (_args: [], flags: ListenValues, deps: ListenDeps): Promise<void> => listen(flags, deps);

/**
 * `extract listen`: runs the receiver until SIGINT or SIGTERM. It says "Listening on <url>"
 * on stderr (scripts and tests read it; with --json {"type":"listening","url":...}); stdout
 * holds only the records (when there is no -o), as JSON Lines.
 */
export async function listen(flags: ListenValues, deps: ListenDeps): Promise<void> {
  verbosityOf(flags);
  const { port, maxBody: maxBodyBytes, maxConnections } = flags;
  const dataDir = resolve(deps.cwd, flags.dataDir);
  const given = resolveAuth(flags, deps.env);
  const delay = deps.env[ENV.workerDelay];
  const batchBytes = deps.env[ENV.batchBytes];
  const say = (line: string): void => void deps.stderr.write(`${line}\n`);
  // With --json every stderr line is NDJSON, the start-up notes included.
  const note = (message: string): void => say(flags.json ? JSON.stringify({ type: 'note', message }) : message);

  // No credentials and no explicit --auth none: a token made once and kept in the data directory.
  let auth: ReceiverAuth;
  if (given === 'generate') {
    const kept = ensureToken(dataDir);
    auth = { type: 'bearer', token: kept.token };
    if (kept.created) {
      note(
        `auth: bearer with a token made for this data directory (kept in ${kept.path}, mode 0600); senders must send:`,
      );
      // The one time the token is printed: a line to copy into the sender's settings.
      say(
        flags.json
          ? JSON.stringify({ type: 'token', authorization: `Bearer ${kept.token}` })
          : `Authorization: Bearer ${kept.token}`,
      );
    } else {
      note(
        `auth: bearer with the token kept in ${kept.path} (set ${ENV.token} for another, or --auth none to accept any sender)`,
      );
    }
  } else auth = given;
  if (flags.token !== undefined) note(visibleSecretNote('--token', ENV.token));
  if (flags.password !== undefined) note(visibleSecretNote('--password', ENV.password));

  const receiver = await startReceiver(
    {
      host: flags.host,
      port,
      path: flags.path,
      auth,
      dataDir,
      out: flags.out,
      format: flags.format,
      formulaProtection: flags.noFormulaProtection !== true,
      missingMarker: await missingMarkerOf(flags, deps.env),
      json: flags.json,
      quiet: flags.quiet,
      maxBodyBytes,
      maxConnections,
      log: say,
      ...(delay !== undefined && delay !== '' ? { workerDelayMs: Number(delay) } : {}),
      ...(batchBytes !== undefined && batchBytes !== '' ? { batchBytes: Number(batchBytes) } : {}),
    },
    { stdout: deps.stdout, cwd: deps.cwd, now: () => new Date() },
  );
  // Listening for signals before printing anything: whoever reads "Listening on" may stop us at once.
  const stop = Promise.race([once(deps.signals, 'SIGINT'), once(deps.signals, 'SIGTERM')]);
  // On stderr, as every other line but the records: stdout stays pure JSON Lines (listen | jq -c .).
  say(flags.json ? JSON.stringify({ type: 'listening', url: receiver.url }) : `Listening on ${receiver.url}`);
  note(`auth: ${auth.type}; inbox: ${dataDir}; records: ${flags.out ?? 'stdout (JSON Lines)'}`);
  if (!isLoopbackHost(flags.host)) {
    note(
      `warning: bound to ${flags.host}, not loopback: anyone who can reach this machine can send events` +
        (auth.type === 'none' ? ', and --auth none lets them all in: use --auth bearer' : ''),
    );
  }
  await stop;
  note('stopping...');
  await receiver.close();
}

/**
 * The authentication from the flags and the environment. Without --auth it follows from
 * what was given (--token or EXTRACT_LISTEN_TOKEN: bearer; --user: basic; nothing: 'generate',
 * a bearer token made once and kept in the data directory); --auth none must be asked for.
 * A combination that cannot be meant (a token with --auth basic) is a usage error.
 */
export function resolveAuth(
  flags: Partial<Pick<ListenValues, 'auth' | 'token' | 'user' | 'password'>>,
  env: NodeJS.ProcessEnv,
): ReceiverAuth | 'generate' {
  const envToken = _nonEmpty(env[ENV.token]);
  const envPassword = _nonEmpty(env[ENV.password]);
  const type =
    flags.auth ??
    (flags.token !== undefined || (envToken !== undefined && flags.user === undefined)
      ? 'bearer'
      : flags.user !== undefined
        ? 'basic'
        : 'generate');
  if (type === 'generate') return 'generate';
  switch (type) {
    case 'none':
      if (flags.token !== undefined || flags.user !== undefined || flags.password !== undefined) {
        throw new ExtractError(
          'usage',
          '--auth none takes no credentials: drop --token/--user/--password, or use --auth bearer or --auth basic',
        );
      }
      return { type: 'none' };
    case 'bearer': {
      if (flags.user !== undefined || flags.password !== undefined) {
        throw new ExtractError(
          'usage',
          '--user and --password are for --auth basic: with --auth bearer, give only a token',
        );
      }
      const token = _nonEmpty(flags.token) ?? envToken;
      if (token === undefined) {
        throw new ExtractError(
          'usage',
          `--auth bearer needs a token: set ${ENV.token} (kept out of ps), or pass --token`,
        );
      }
      return { type: 'bearer', token };
    }
    case 'basic': {
      if (flags.token !== undefined) {
        throw new ExtractError('usage', '--token is for --auth bearer: with --auth basic, give --user and a password');
      }
      const username = _nonEmpty(flags.user);
      const password = _nonEmpty(flags.password) ?? envPassword;
      if (username === undefined || password === undefined) {
        throw new ExtractError(
          'usage',
          `--auth basic needs --user and a password: pass --user U, and set ${ENV.password} (kept out of ps) or pass --password`,
        );
      }
      // RFC 7617: the user-id cannot hold a colon, the first colon separates it from the password.
      if (username.includes(':'))
        throw new ExtractError(
          'usage',
          '--user cannot contain ":" (basic authentication splits on it): choose another user name',
        );
      return { type: 'basic', username, password };
    }
    default:
      throw new ExtractError('usage', `unknown --auth "${type}": use none, bearer or basic`);
  }
}

function _nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
