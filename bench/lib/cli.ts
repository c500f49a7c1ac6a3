import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, NODE } from './paths.ts';
import { measure, type Measured } from './proc.ts';

export type ExtractRun = {
  inputs: string[];
  baseUrl: string;
  key: string;
  concurrency?: number;
  out: string;
  state: string | null;
  extra?: string[];
  /** Write the CLI's /proc/<pid>/io (rchar, read_bytes...) to this file when it ends. */
  ioFile?: string;
  /** Kill the run after this long (default: proc.ts's 10 minutes). */
  timeoutMs?: number;
};

/** The environment of a benchmarked CLI: a config store of its own, no key or URL from the caller's. */
export function cleanEnv(home: string): NodeJS.ProcessEnv {
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), NO_COLOR: '1' };
  delete env.EXTRACT_API_KEY;
  delete env.EXTRACT_BASE_URL;
  return env;
}

/** The real CLI as users run it, in a child process, under /usr/bin/time. */
export function runExtract(r: ExtractRun, home: string): Promise<Measured> {
  const args = [CLI, ...r.inputs, '--base-url', r.baseUrl, '--api-key', r.key, '--no-progress', '-q', '-o', r.out];
  if (r.concurrency !== undefined) args.push('-c', String(r.concurrency));
  args.push(...(r.state === null ? ['--no-state'] : ['--state', r.state]));
  args.push(...(r.extra ?? []));
  if (r.ioFile === undefined) return measure(NODE, args, { env: cleanEnv(home), timeoutMs: r.timeoutMs });
  // A shell's /proc/<pid>/io counts the children it has waited for: the CLI's reads, with the shell's own few.
  return measure(
    'sh',
    ['-c', 'io=$1; shift; "$@"; s=$?; cat /proc/$$/io > "$io"; exit $s', 'sh', r.ioFile, NODE, ...args],
    {
      env: cleanEnv(home),
    },
  );
}
