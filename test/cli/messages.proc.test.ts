import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { KEY as SERVICE_KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The small things a user notices, end to end on the built CLI: a rejected key said
 * once, a port clash said without a stray line, "1 page", a snake_case report, and a secret
 * given to `config set` on the command line warned about (or kept off it altogether).
 */
function run(args: string[], env: Record<string, string> = {}, cwd = tempDir(), input?: string) {
  return execa(process.execPath, [CLI, ...args], {
    env: cleanEnv(env),
    extendEnv: false,
    reject: false,
    cwd,
    ...(input !== undefined ? { input } : {}),
  });
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('messages (built CLI)', () => {
  it('a rejected key under -q: said once, with what to fix, not "rerun the same command to resume"', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = tempDir();
    for (const n of [1, 2]) writeFileSync(join(cwd, `i${n}.pdf`), await invoicePdf(n));
    const r = await run(
      ['i1.pdf', 'i2.pdf', '-q', '--base-url', server.url, '--state', 'j.jsonl', '-o', 'out.jsonl'],
      { EXTRACT_API_KEY: 'ext_wrong_key_0000000000' },
      cwd,
    );
    expect(r.exitCode, r.stderr).toBe(4);
    expect(count(r.stderr, 'rejected the API key'), r.stderr).toBe(1);
    expect(r.stderr).not.toContain('rerun the same command to resume');
    expect(r.stderr).toContain('fix the API key, then rerun the same command');
  });

  it('a secret on the batch command line is warned about as listen warns for --token, never printed', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'one.pdf'), await invoicePdf(1));
    const key = 'ext_typed_on_the_command_line_0001';
    const keyed = await run(['one.pdf', '--dry-run', '--no-state', '--api-key', key], {}, cwd);
    expect(keyed.exitCode, keyed.stderr).toBe(0);
    expect(keyed.stderr).toContain(
      'note: --api-key is visible to other users of this machine (ps); prefer EXTRACT_API_KEY',
    );
    expect(keyed.stderr + keyed.stdout).not.toContain(key);

    // A password inside a --state URL: said before the database is tried (it is unreachable here).
    const state = await run(
      ['one.pdf', '--dry-run', '--state', 'postgres://worker:s3cret-pass@127.0.0.1:1/extract', '--state-wait', '1ms'],
      { EXTRACT_API_KEY: key },
      cwd,
    );
    expect(state.stderr).toContain('note: the password in --state is visible to other users of this machine (ps)');
    expect(state.stderr + state.stdout).not.toContain('s3cret-pass');

    // From the environment: no note.
    const quiet = await run(['one.pdf', '--dry-run', '--no-state'], { EXTRACT_API_KEY: key }, cwd);
    expect(quiet.stderr).not.toContain('visible to other users');
  });

  it('a port clash: the reason alone, no "received 0 ..." line of a receiver that never served', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (blocker.address() as AddressInfo).port;
      const r = await run(['serve', '--port', String(port), '--listen-port', '0']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).not.toContain('received 0');
      expect(r.stderr.split('\n')[0]).toMatch(/^extract: a port is in use/);
    } finally {
      blocker.close();
    }
  });

  it('--dry-run says "1 page" and "1 credit", not "1 pages"', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'one.pdf'), await invoicePdf(1));
    writeFileSync(join(cwd, 'two.pdf'), await invoicePdf(2, 2));
    const one = await run(['one.pdf', '--dry-run', '--no-state'], {}, cwd);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^inline +1 page +one\.pdf/m);
    expect(one.stdout).toMatch(/^total +1 credit$/m);
    expect(one.stderr).toContain('costing about 1 credit;');
    expect(`${one.stdout}${one.stderr}`).not.toMatch(/\b1 (pages|credits)\b/);
    const both = await run(['one.pdf', 'two.pdf', '--dry-run', '--no-state'], {}, cwd);
    expect(both.stdout).toMatch(/^inline +2 pages +two\.pdf/m);
    expect(both.stdout).toMatch(/^total +3 credits$/m);
  });

  it('--report: every key snake_case (exit_code, not exitCode)', async ({ emulator }) => {
    // Against the file's in-process emulator: a --local run started an engine of its own in the
    // CLI for the same report.
    const server = await emulator();
    const cwd = tempDir();
    writeFileSync(join(cwd, 'one.pdf'), await invoicePdf(1));
    const r = await run(
      ['one.pdf', '--base-url', server.url, '--state', 'j.jsonl', '-q', '--report', 'report.json', '-o', 'out.jsonl'],
      { EXTRACT_API_KEY: SERVICE_KEY },
      cwd,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as Record<string, unknown>;
    expect(report.exit_code).toBe(0);
    const keys: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) {
          keys.push(k);
          walk(v);
        }
    };
    walk(report);
    expect(keys).toContain('documents');
    expect(keys.filter((k) => !/^[a-z][a-z0-9_]*$/.test(k))).toEqual([]);
  });
});

describe('config set api_key (built CLI)', () => {
  const KEY = 'ext_config_test_key_00001234';

  it('with the key on the command line: stored, with a warning that it is now in shell history', async () => {
    const dir = tempDir();
    const r = await run(['config', 'set', 'api_key', KEY], { EXTRACT_CONFIG_DIR: dir });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: the API key is now in your shell's history/);
    expect(`${r.stdout}${r.stderr}`).not.toContain(KEY);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).api_key).toBe(KEY);
    // A base URL is no secret: no warning.
    const url = await run(['config', 'set', 'base_url', 'https://x.example'], { EXTRACT_CONFIG_DIR: dir });
    expect(url.stderr).not.toContain('warning');
  });

  it('with no value: read from standard input when piped, no warning', async () => {
    const dir = tempDir();
    const r = await run(['config', 'set', 'api_key'], { EXTRACT_CONFIG_DIR: dir }, tempDir(), KEY);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('warning');
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).api_key).toBe(KEY);
  });

  it('with no value on a terminal: a prompt that does not echo the key', async () => {
    const dir = tempDir();
    const bin = tempDir('extract-bin-');
    writeFileSync(join(bin, 'extract'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
    // util-linux's script(1) gives the command a terminal and feeds it what we type.
    const child = execa('script', ['-qfec', 'extract config set api_key', '/dev/null'], {
      env: cleanEnv({ EXTRACT_CONFIG_DIR: dir, PATH: `${bin}:${process.env.PATH ?? ''}` }),
      extendEnv: false,
      reject: false,
      stdin: 'pipe',
    });
    let seen = '';
    child.stdout!.on('data', (c: Buffer) => {
      seen += c.toString();
      if (seen.includes('press Enter: ') && !seen.includes('typed')) {
        seen += '(typed)';
        child.stdin!.write(`${KEY}\r`);
      }
    });
    const r = await child;
    expect(r.exitCode, seen).toBe(0);
    expect(seen).toContain('api_key set to ext_…1234');
    expect(seen).not.toContain(KEY);
    expect(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')).api_key).toBe(KEY);
  });
});
