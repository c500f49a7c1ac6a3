import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from '../helpers/cli.ts';
import { readJournalLines } from '../helpers/journal.ts';
import { KEY, extract, fixtureNames, readJsonLines, reservesBySha, workDir, serveForFile } from './batch-helpers.ts';

/**
 * Outputs behave like every Unix tool's (README: "Outputs"): `-` is stdout for
 * -o and --report, devices, FIFOs and /dev/fd/N are written as streams, a symlink is written
 * through, a file keeps its mode. The stand-in service ignores Idempotency-Key, so every POST
 * extract is a charge: a run that pays and then loses its output would show in the ledger.
 *
 * The machine's own /dev/null, /dev/full and /dev/stdout are never the target of a test: as root,
 * a regression would replace them for every process on the machine. Each test makes its own
 * device node (mknod, root) or its own link to /proc/self/fd/1, which is what /dev/stdout is.
 */

/**
 * What each test sends: three of the fixtures, the two-page one among them, enough to show every
 * record reaches its output (six showed no more, for twice the engine's reading); the EPIPE test
 * sends all of them, ten times over.
 */
const ALL = fixtureNames();
const NAMES = [ALL[0]!, ALL[1]!, ALL.find((name) => name.includes('two-pages'))!];

/** A working directory with NAMES under in/. */
function docsDir(): string {
  const cwd = workDir();
  for (const name of ALL.filter((n) => !NAMES.includes(n))) rmSync(join(cwd, 'in', name));
  return cwd;
}
const ARGS = ['in/', '--state', 'j.jsonl', '--poll-interval', '100ms', '--no-progress'];

function completedFacts(cwd: string): number {
  return readJournalLines(join(cwd, 'j.jsonl')).facts.filter((f) => f.fact === 'completed').length;
}

/** Each document of the run charged once, and no more. */
async function chargedOnce(url: string): Promise<void> {
  const reserves = await reservesBySha(url);
  expect(reserves.size).toBe(NAMES.length);
  expect([...reserves.values()].every((n) => n === 1)).toBe(true);
}

function mknod(path: string, major: number, minor: number): void {
  execFileSync('mknod', [path, 'c', String(major), String(minor)]);
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path]);
}

const isRoot = process.getuid?.() === 0;

// Each test runs the CLI against its own serve: generous on a loaded 2-core machine.
// One `serve` for the file's tests (a start each was most of a short test); each counts only its own charges.
const service = serveForFile({ idempotency_key: false });

describe('outputs: - means stdout', { timeout: 120_000 }, () => {
  it('--report - writes the report on stdout (no file named "-"); -o FILE keeps the records', async () => {
    const url = service();
    const cwd = docsDir();
    const run = await extract(cwd, url, [...ARGS, '-o', 'out.jsonl', '--report', '-']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(existsSync(join(cwd, '-'))).toBe(false);
    const report = JSON.parse(String(run.stdout)) as { completed: number; documents: unknown[] };
    expect(report.completed).toBe(NAMES.length);
    expect(report.documents).toHaveLength(NAMES.length);
    expect(readJsonLines(readFileSync(join(cwd, 'out.jsonl'), 'utf8'))).toHaveLength(NAMES.length);
    await chargedOnce(url);
  });

  it('-o - and --report - (or the default stdout) at once: a usage error before anything is sent', async () => {
    const url = service();
    const cwd = docsDir();
    for (const args of [
      ['-o', '-', '--report', '-'],
      ['--report', '-'],
      ['-o', '-', '--report', '/dev/stdout'],
    ]) {
      const run = await extract(cwd, url, [...ARGS, ...args]);
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/both .*stdout/);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(cwd, '-'))).toBe(false);
    }
    expect((await reservesBySha(url)).size).toBe(0);
  });

  it('--report through a link to /proc/self/fd/1 (what /dev/stdout is) goes to stdout; the link stays a link', async () => {
    const url = service();
    const cwd = docsDir();
    symlinkSync('/proc/self/fd/1', join(cwd, 'stdout'));
    const run = await extract(cwd, url, [...ARGS, '-o', 'out.csv', '--report', 'stdout']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(lstatSync(join(cwd, 'stdout')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(cwd, 'stdout'))).toBe('/proc/self/fd/1');
    expect((JSON.parse(String(run.stdout)) as { completed: number }).completed).toBe(NAMES.length);
  });
});

describe('outputs: files keep what they are', { timeout: 120_000 }, () => {
  it('-o link.jsonl writes through the link to its target, atomically; a dangling link creates its target', async () => {
    const url = service();
    const cwd = docsDir();
    writeFileSync(join(cwd, 'real.jsonl'), 'old\n');
    symlinkSync('real.jsonl', join(cwd, 'link.jsonl'));
    symlinkSync('made.json', join(cwd, 'dangling.json'));
    const run = await extract(cwd, url, [...ARGS, '-o', 'link.jsonl', '--report', 'dangling.json']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(lstatSync(join(cwd, 'link.jsonl')).isSymbolicLink()).toBe(true);
    expect(readJsonLines(readFileSync(join(cwd, 'real.jsonl'), 'utf8'))).toHaveLength(NAMES.length);
    expect(lstatSync(join(cwd, 'dangling.json')).isSymbolicLink()).toBe(true);
    expect((JSON.parse(readFileSync(join(cwd, 'made.json'), 'utf8')) as { completed: number }).completed).toBe(
      NAMES.length,
    );
  });

  it('an output and a report of mode 0600 stay 0600 when replaced', async () => {
    const url = service();
    const cwd = docsDir();
    for (const name of ['out.csv', 'report.json']) {
      writeFileSync(join(cwd, name), 'old\n');
      chmodSync(join(cwd, name), 0o600);
    }
    const run = await extract(cwd, url, [...ARGS, '-o', 'out.csv', '--report', 'report.json']);
    expect(run.exitCode, run.stderr).toBe(0);
    for (const name of ['out.csv', 'report.json']) {
      expect(readFileSync(join(cwd, name), 'utf8')).not.toBe('old\n');
      expect((statSync(join(cwd, name)).mode & 0o777).toString(8)).toBe('600');
    }
  });
});

describe('outputs: devices, FIFOs and /dev/fd/N are streams', { timeout: 120_000 }, () => {
  it.skipIf(!isRoot)(
    'as root (mknod needs it; /dev/null unit-tested in test/outputs/destination.proc.test.ts), -o and --report to a null device leave the device a device',
    async () => {
      const url = service();
      const cwd = docsDir();
      mknod(join(cwd, 'null'), 1, 3);
      const run = await extract(cwd, url, [...ARGS, '-o', 'null', '--report', 'null']);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(statSync(join(cwd, 'null')).isCharacterDevice()).toBe(true);
      expect(completedFacts(cwd)).toBe(NAMES.length);
    },
  );

  it.skipIf(!isRoot)(
    'as root (mknod needs it; ENOSPC also in test/outputs/destination.proc.test.ts), a full device: a clear error naming the output (ENOSPC), exit 8, no stack; the journal holds every result',
    async () => {
      const url = service();
      const cwd = docsDir();
      mknod(join(cwd, 'full'), 1, 7);
      const run = await extract(cwd, url, [...ARGS, '-o', 'full', '--report', 'report.json']);
      expect(run.exitCode, run.stderr).toBe(8);
      expect(run.stderr).toContain('ENOSPC');
      expect(run.stderr).toContain(join(cwd, 'full'));
      expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
      expect(statSync(join(cwd, 'full')).isCharacterDevice()).toBe(true);
      expect(completedFacts(cwd)).toBe(NAMES.length);
      // The report is still written, and says the run did not end well.
      expect((JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as { exit_code: number }).exit_code).toBe(8);
      // The rerun to a file costs nothing.
      const rerun = await extract(cwd, url, [...ARGS, '-o', 'out.jsonl']);
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      await chargedOnce(url);
    },
  );

  it('-o FIFO with a reader: the reader gets every record, the FIFO stays a FIFO', async () => {
    const url = service();
    const cwd = docsDir();
    const fifo = join(cwd, 'pipe');
    mkfifo(fifo);
    const run = extract(cwd, url, [...ARGS, '-o', 'pipe']);
    // The reader comes late, as a person's `cat pipe` would.
    const read = open(fifo, 'r').then(async (handle) => {
      try {
        return await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    });
    const [done, text] = await Promise.all([run, read]);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(readJsonLines(text)).toHaveLength(NAMES.length);
    expect(statSync(fifo).isFIFO()).toBe(true);
    await chargedOnce(url);
  });

  it('-o FIFO that nobody reads: SIGTERM ends the wait promptly (exit 130), the journal intact, the FIFO kept', async () => {
    const url = service();
    const cwd = docsDir();
    const fifo = join(cwd, 'pipe');
    mkfifo(fifo);
    const run = extract(cwd, url, [...ARGS, '-o', 'pipe', '--report', 'report.json']);
    // Every document is done before the run waits for a reader: it says so, then waits.
    let said = '';
    run.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    await waitForText(() => (said.includes('waiting for a reader') ? '1' : ''), 1, 60_000);
    expect(completedFacts(cwd)).toBe(NAMES.length);
    // SIGTERM is heeded (it was ignored for minutes): the run ends, with 130, rather than the
    // test's time-out. How soon is not asserted (a loaded machine moves it).
    run.kill('SIGTERM');
    const done = await run;
    expect(done.exitCode, done.stderr).toBe(130);
    expect(done.stderr).toContain(`waiting for a reader to open ${fifo}`);
    expect(done.stderr).toContain(fifo);
    expect(done.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(completedFacts(cwd)).toBe(NAMES.length);
    expect(existsSync(join(cwd, 'report.json'))).toBe(true);
  });

  it('-o FIFO whose reader leaves without reading (EPIPE): a clear error, exit 8, the journal intact', async () => {
    const url = service();
    const cwd = workDir();
    // Ten copies of each document (sent once each: same content) make records (about 75 KB per
    // 1,000) well over a pipe's 64 KB, so the writer is still writing when the reader leaves.
    for (let n = 1; n < 10; n++) cpSync(join(cwd, 'in'), join(cwd, 'copies', String(n)), { recursive: true });
    const fifo = join(cwd, 'pipe');
    mkfifo(fifo);
    const run = extract(cwd, url, [...ARGS, 'copies/', '-o', 'pipe']);
    // A reader that opens the FIFO and closes it without reading, as `head -c0` would.
    const reader = await open(fifo, 'r');
    await reader.close();
    const done = await run;
    expect(done.exitCode, done.stderr).toBe(8);
    expect(done.stderr).toContain('EPIPE');
    expect(done.stderr).toContain(fifo);
    expect(done.stderr).not.toMatch(/unexpected error|\n\s+at /);
    expect(statSync(fifo).isFIFO()).toBe(true);
    expect(completedFacts(cwd)).toBe(ALL.length);
  });

  it('-o >(wc -l) (a /dev/fd/N pipe from bash): every record reaches the reader, nothing crashes', async () => {
    const url = service();
    const cwd = docsDir();
    const script = `"${process.execPath}" "${CLI}" ${ARGS.join(' ')} -o >(wc -l > count.txt); status=$?; wait $!; exit $status`;
    const run = await execa('bash', ['-c', script], {
      cwd,
      env: cleanEnv({ EXTRACT_API_KEY: KEY, EXTRACT_BASE_URL: url, EXTRACT_CONFIG_DIR: join(cwd, '.config') }),
      extendEnv: false,
      reject: false,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/unexpected error|\n\s+at /);
    await waitForText(() => readFileSync(join(cwd, 'count.txt'), 'utf8'), 1, 10_000);
    expect(readFileSync(join(cwd, 'count.txt'), 'utf8').trim()).toBe(String(NAMES.length));
    await chargedOnce(url);
  });
});

/** Waits until `read()` holds at least `lines` lines (a file not there yet reads as none). */
async function waitForText(read: () => string, lines: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = read();
    } catch {}
    if (text.split('\n').filter((l) => l.includes('"completed"') || /^\d+$/.test(l.trim())).length >= lines) return;
    if (Date.now() > until) throw new Error(`waited ${timeoutMs} ms for ${lines} lines; have:\n${text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
