import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it, extract, KEY } from '../e2e/batch-helpers.ts';
import { buildProgram } from '../../src/cli/main.ts';
import type { Command } from 'commander';

/**
 * What a user meets at the command surface, on the built CLI: bare `extract` answers with a
 * short usage, `get` of an unknown id says so on stderr, `status` shows the workers that matter
 * now, and a dry run says a route's reason once.
 */
const count = (text: string, part: string): number => text.split(part).length - 1;

describe('the command surface (built CLI)', () => {
  it('bare "extract": a short usage on stderr (what it does, the common commands, where the rest is), exit 2', async () => {
    const cwd = tempDir();
    const r = await extract(cwd, 'http://127.0.0.1:1', []);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length, r.stderr).toBeLessThanOrEqual(12);
    for (const part of ['extract watch', 'extract get', 'extract status', 'extract --help'])
      expect(r.stderr).toContain(part);
    // Not the full help: no option list.
    expect(r.stderr).not.toContain('--poll-max-interval');
  });

  it('"extract get doc_x": a plain error on stderr and exit 1, nothing on stdout; --json keeps it as a JSON record', async ({
    serve,
  }) => {
    const { url } = await serve();
    const cwd = tempDir();
    const r = await extract(cwd, url, ['get', 'doc_x']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^extract: doc_x: .*not found/im);
    expect(r.stderr).not.toContain('{');

    const json = await extract(cwd, url, ['get', 'doc_x', '--json']);
    expect(json.exitCode, json.stderr).toBe(1);
    const record = JSON.parse(json.stdout.trim()) as Record<string, unknown>;
    expect(record).toMatchObject({ document_id: 'doc_x', status: 'error' });
  });

  it('"extract status" lists the live workers and those of the last run, and counts the earlier ones', async ({
    serve,
  }) => {
    const { url } = await serve();
    const cwd = tempDir();
    for (const n of [1, 2, 3]) {
      writeFileSync(join(cwd, `i${n}.pdf`), await invoicePdf(n));
      const r = await extract(cwd, url, [`i${n}.pdf`, '--state', 'j.sqlite', '-o', `o${n}.jsonl`, '-q']);
      expect(r.exitCode, r.stderr).toBe(0);
    }
    const status = await extract(cwd, url, ['status', '--state', 'j.sqlite']);
    expect(status.exitCode, status.stderr).toBe(0);
    const workerLines = status.stdout.split('\n').filter((l) => /completed, \d+ failed, \d+ pages;/.test(l));
    expect(workerLines, status.stdout).toHaveLength(1);
    expect(status.stdout).toContain('2 earlier workers not shown');
    // The JSON view keeps every worker: a script counts them itself.
    const json = await extract(cwd, url, ['status', '--state', 'j.sqlite', '--json']);
    expect((JSON.parse(json.stdout) as { workers: unknown[] }).workers).toHaveLength(3);
  });

  it('--dry-run says why a route was chosen once, not on every line', async () => {
    const cwd = tempDir();
    for (const n of [1, 2, 3]) writeFileSync(join(cwd, `i${n}.pdf`), await invoicePdf(n));
    const r = await extract(cwd, 'http://127.0.0.1:1', ['.', '--dry-run', '--no-state']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(count(r.stdout, 'at most --inline-max'), r.stdout).toBe(1);
    expect(r.stdout).toMatch(/i1\.pdf/);
    expect(r.stdout).toMatch(/i3\.pdf/);
  });

  it('every command that does work takes -q, -v and --color; -q with -v is a usage error on each', async () => {
    const leaves: [string, Command][] = [];
    const visit = (cmd: Command, path: string): void => {
      if (cmd.commands.length === 0 || path === 'extract') leaves.push([path, cmd]);
      for (const sub of cmd.commands) visit(sub, `${path} ${sub.name()}`);
    };
    visit(buildProgram(), 'extract');
    // Commands that print one fixed thing take no verbosity: the version, help, completion scripts.
    const working = leaves.filter(([path]) => !/ (version|help|completion)$/.test(path));
    expect(working.map(([p]) => p).sort()).toEqual(
      [
        'extract',
        'extract config get',
        'extract config list',
        'extract config path',
        'extract config set',
        'extract config unset',
        'extract get',
        'extract journal compact',
        'extract listen',
        'extract serve',
        'extract status',
        'extract watch',
      ].sort(),
    );
    for (const [path, cmd] of working) {
      const flags = cmd.options.map((o) => o.flags);
      for (const f of ['-q, --quiet', '-v, --verbose', '--color <when>']) expect(flags, path).toContain(f);
    }
    const cwd = tempDir();
    const both = await extract(cwd, 'http://127.0.0.1:1', ['status', '-q', '-v', '--state', 'j.jsonl']);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('-q and -v contradict each other');
  });

  it('-q and -v where they say something: config set -q says nothing, get -v names each request', async ({ serve }) => {
    const { url } = await serve();
    const cwd = tempDir();
    const loud = await extract(cwd, url, ['config', 'set', 'base_url', 'https://x.example']);
    expect(loud.stderr).toContain('base_url set to https://x.example');
    const quiet = await extract(cwd, url, ['config', 'set', 'base_url', 'https://x.example', '-q']);
    expect(quiet.exitCode).toBe(0);
    expect(quiet.stderr).toBe('');
    const verbose = await extract(cwd, url, ['get', 'doc_x', '-v']);
    expect(verbose.stderr).toMatch(/GET .*doc_x.* -> 404/);
  });

  it('--color: always paints stderr on a pipe, never wins over FORCE_COLOR, auto follows FORCE_COLOR then NO_COLOR', async ({
    serve,
  }) => {
    const { url } = await serve();
    const cwd = tempDir();
    writeFileSync(join(cwd, 'i1.pdf'), await invoicePdf(1));
    const ESC = '\u001b[';
    const run = (extra: string[], env: Record<string, string> = {}) =>
      extract(cwd, url, ['i1.pdf', '-v', '--no-state', '-o', 'o.jsonl', ...extra], {
        env: {
          PATH: process.env.PATH ?? '',
          HOME: cwd,
          EXTRACT_API_KEY: KEY,
          EXTRACT_BASE_URL: url,
          XDG_STATE_HOME: join(cwd, '.state'),
          ...env,
        },
      });
    const always = await run(['--color', 'always'], { NO_COLOR: '1' });
    expect(always.exitCode, always.stderr).toBe(0);
    expect(always.stderr).toContain(ESC);
    expect((await run([])).stderr).not.toContain(ESC);
    expect((await run([], { FORCE_COLOR: '1' })).stderr).toContain(ESC);
    expect((await run(['--color', 'never'], { FORCE_COLOR: '1' })).stderr).not.toContain(ESC);
    expect((await run(['--color', 'auto'], { NO_COLOR: '1' })).stderr).not.toContain(ESC);
  });
});
