import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { execa } from 'execa';
import { onTestFinished } from 'vitest';
import { LedgerBody, type EmulatorConfigInput } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { CLI, cleanEnv, stateHomeIn, tempDir } from '../helpers/cli.ts';
import type { StartEmulator } from '../helpers/emulator.ts';
import { it as withServers } from '../helpers/fixtures.ts';

/** Helpers of the batch client's end-to-end tests: the emulator, the built CLI, the ledger. */

export const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'invoices');
export const KEY = DEFAULT_CONFIG.parsers[0]!.api_keys[0]!;

export function fixtureNames(): string[] {
  return readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.pdf'))
    .sort();
}

export function expectedResults(pdf: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, pdf.replace(/\.pdf$/, '.expected.json')), 'utf8'));
}

/** A working directory with the invoice fixtures copied under in/. */
export function workDir(): string {
  const dir = tempDir('extract-batch-');
  cpSync(FIXTURES, join(dir, 'in'), { recursive: true, filter: (src) => !src.endsWith('.expected.json') });
  return dir;
}

/** Whether strace runs here (a container may forbid ptrace). */
export function straceWorks(): boolean {
  return spawnSync('strace', ['-f', '-o', '/dev/null', 'true']).status === 0;
}

/**
 * The service for the built CLI to talk to: the emulator with the default config plus overrides,
 * in memory, served from this process (helpers/emulator.ts). The CLI is what these tests start as a
 * process; `extract serve` as a process (its start, signals, crashes) has tests of its own
 * (emulator/serve-cli, emulator/restart, reliability/emulator-crash), and each one started here
 * cost 0.8-1.1 CPU-seconds.
 */
export type Serve = (overrides?: Partial<EmulatorConfigInput>) => Promise<{ url: string }>;

const serveOn =
  (emulator: StartEmulator): Serve =>
  (overrides = {}) =>
    emulator({ processing: { ms_per_page: 0, concurrency: 4 }, ...overrides });

/** The e2e tests' `it`: test/helpers/fixtures.ts's, plus `serve` (closed after the test). */
export const it = withServers.extend('serve', async ({ emulator }): Promise<Serve> => serveOn(emulator));

/**
 * The built CLI with a clean environment pointed at `url`; `input` is its standard input,
 * `uid` runs it as another user (as root: permission denied is real only for someone else).
 */
export function extract(
  cwd: string,
  url: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string | Buffer; uid?: number; straceTo?: string } = {},
) {
  // Under strace (file system calls of every thread, into `straceTo`): what a run opens and stats.
  const [command = process.execPath, ...prefix] =
    options.straceTo === undefined
      ? []
      : ['strace', '-f', '-e', 'trace=%file', '-o', options.straceTo, process.execPath];
  const child = execa(command, [...prefix, CLI, ...args], {
    cwd,
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    env:
      options.env ??
      cleanEnv({
        EXTRACT_API_KEY: KEY,
        EXTRACT_BASE_URL: url,
        EXTRACT_CONFIG_DIR: join(cwd, '.config'),
        XDG_STATE_HOME: stateHomeIn(cwd),
      }),
    extendEnv: false,
    reject: false,
  });
  // Killed when the test ends, should it not have waited for it (a run in beforeAll is awaited there,
  // and onTestFinished throws outside a test).
  try {
    onTestFinished(() => void child.kill('SIGKILL'));
  } catch {
    /* not in a test */
  }
  return child;
}

/**
 * The service's ledger; on a serve shared by a file's tests (serveForFile), only the entries made
 * since the current test began (the balance stays the service's).
 */
export async function ledger(url: string): Promise<LedgerBody> {
  const res = await fetch(`${url}/_emulator/ledger`);
  const body = LedgerBody.parse(await res.json());
  return { ...body, entries: body.entries.slice(ledgerMarks.get(url) ?? 0) };
}

/** Per shared serve, how many ledger entries (in order of their making) came before the current test. */
const ledgerMarks = new Map<string, number>();

/**
 * One `serve` for the tests of a file (or describe block) that call it at their top level, in place
 * of one each: started before them (the `fileEmulator` fixture), closed when the file is done.
 * Each test sees only its own ledger entries (ledger, reservesBySha), so what a test paid is
 * counted as on a serve of its own. Not for a test that changes the service for those after it (a
 * fault rule): it starts its own serve().
 */
export function serveForFile(overrides: Partial<EmulatorConfigInput> = {}): () => string {
  let url = '';
  it.beforeAll(async ({ fileEmulator }) => {
    ({ url } = await serveOn(fileEmulator)(overrides));
  }, 120_000);
  it.beforeEach(async () => {
    ledgerMarks.delete(url);
    ledgerMarks.set(url, (await ledger(url)).entries.length);
  });
  // A later serve may get the same port.
  it.afterAll(() => ledgerMarks.delete(url));
  return () => url;
}

/**
 * Charges that stood, per document content: reserves minus refunds (a timed-out inline
 * attempt is reserved then refunded). Every value must be 1: each document paid once.
 */
export async function reservesBySha(url: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const e of (await ledger(url)).entries) {
    if (e.sha256 === null || e.kind === 'topup') continue;
    counts.set(e.sha256, (counts.get(e.sha256) ?? 0) + (e.kind === 'reserve' ? 1 : -1));
  }
  return counts;
}

export function readJsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
