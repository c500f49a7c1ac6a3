import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CliProcess, type SpawnCli, tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { KEY } from './batch-helpers.ts';

/** Helpers of `extract watch`'s end-to-end tests: the built CLI watching a real folder. */

/** A working directory with an empty drop folder in/. */
export function dropDir(): string {
  const cwd = tempDir('extract-watch-');
  mkdirSync(join(cwd, 'in'));
  return cwd;
}

/** `extract watch ARGS` in `cwd` against `url`, its journal the one `extract(cwd, ...)` uses; resolves once it watches. */
export async function startWatch(spawnCli: SpawnCli, cwd: string, url: string, args: string[]): Promise<CliProcess> {
  const watcher = spawnCli(['watch', ...args], {
    cwd,
    env: { EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: url, EXTRACT_CONFIG_DIR: join(cwd, '.config') },
  });
  await watcher.waitFor(/info {2}watching /, 60_000);
  return watcher;
}

/** `n` distinct one-page invoices, written elsewhere and renamed into in/ at once (a drop). */
export async function dropInvoices(cwd: string, n: number, from = 0): Promise<string[]> {
  const staging = join(cwd, 'staging');
  mkdirSync(staging, { recursive: true });
  const names: string[] = [];
  for (let i = from; i < from + n; i++) {
    const name = `inv-${String(i).padStart(3, '0')}.pdf`;
    writeFileSync(join(staging, name), await invoicePdf(5000 + i));
    names.push(name);
  }
  for (const name of names) renameSync(join(staging, name), join(cwd, 'in', name));
  return names.map((name) => `in/${name}`);
}

export function jsonLinesOf(path: string): Array<Record<string, unknown>> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Polls until `check` holds; on time out, says what the watcher printed. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  watcher: CliProcess | undefined,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; the watcher said:\n${watcher?.stderr().slice(-4000) ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends a signal as systemd or docker stop would: once. (execa's own kill() follows a SIGTERM
 * with a SIGKILL after 5 s, while documents in flight may still be finishing.)
 */
export function signal(watcher: CliProcess, name: 'SIGTERM' | 'SIGINT'): void {
  process.kill(watcher.child.pid!, name);
}
