import { hostname } from 'node:os';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';
import { payload, send } from '../receiver/helpers.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The shell's conventions, end to end on the built CLI: help, help topics, version,
 * completion scripts, --version everywhere, did-you-mean for commands, listen's stdout as pure
 * JSON Lines, and an exit code of its own for "another run holds the journal".
 */
function run(args: string[], env: Record<string, string> = {}, cwd = tempDir()) {
  return execa(process.execPath, [CLI, ...args], { env: cleanEnv(env), extendEnv: false, reject: false, cwd });
}

const VERSION_LINE = /^extract \d+\.\d+\.\d+ \(node v\d+\.\d+\.\d+, [a-z0-9]+ [a-z0-9_]+\)$/;

/** A directory holding an `extract` that runs the built CLI, for shells to find on PATH. */
function onPath(): string {
  const dir = tempDir('extract-bin-');
  writeFileSync(join(dir, 'extract'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`, { mode: 0o755 });
  return dir;
}

describe('help, topics and version (built CLI)', () => {
  it('extract help, extract help <command> and extract help <topic> print help, exit 0, no key needed', async () => {
    const root = await run(['help']);
    expect(root.exitCode, root.stderr).toBe(0);
    expect(root.stdout).toMatch(/^Usage: extract /);
    expect(root.stdout).toContain('completion');
    const serve = await run(['help', 'serve']);
    expect(serve.exitCode, serve.stderr).toBe(0);
    expect(serve.stdout).toMatch(/^Usage: extract serve /);
    const set = await run(['help', 'config', 'set']);
    expect(set.stdout).toMatch(/^Usage: extract config set /);
    const environment = await run(['help', 'environment']);
    expect(environment.exitCode).toBe(0);
    for (const name of ['EXTRACT_API_KEY', 'EXTRACT_BASE_URL', 'EXTRACT_STATE_URL', 'EXTRACT_LISTEN_TOKEN', 'NO_COLOR'])
      expect(environment.stdout).toContain(name);
    const codes = await run(['help', 'exit-codes']);
    expect(codes.exitCode).toBe(0);
    for (const code of ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '130'])
      expect(codes.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
    const formats = await run(['help', 'formats']);
    expect(formats.exitCode).toBe(0);
    expect(formats.stdout).toContain('FILE.csv');
    // The batch command's --help quotes the same exit codes.
    expect((await run(['--help'])).stdout).toContain(codes.stdout.trim());
    const typo = await run(['help', 'enviroment']);
    expect(typo.exitCode).toBe(2);
    expect(typo.stderr).toContain('did you mean "extract help environment"');
  });

  it('extract version, --json (runtime, platform, the base URL in use, never a secret) and --version on every command', async () => {
    const key = 'ext_secret_key_never_printed_1234';
    const env = { EXTRACT_API_KEY: key, EXTRACT_BASE_URL: 'https://user:hunter2@extract.example.com' };
    const text = await run(['version'], env);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain(`node ${process.version}`);
    expect(text.stdout).toContain(`${process.platform} ${process.arch}`);
    const json = await run(['version', '--json'], env);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      name: 'extract',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
      runtime: { name: 'node', version: process.versions.node },
      platform: { os: process.platform, arch: process.arch },
      base_url: expect.stringContaining('extract.example.com'),
      base_url_source: 'env',
    });
    for (const r of [text, json]) {
      expect(`${r.stdout}${r.stderr}`).not.toContain('hunter2');
      expect(`${r.stdout}${r.stderr}`).not.toContain(key);
    }
    // Nothing configured: null, not an error.
    expect(
      JSON.parse((await run(['version', '--json'], { EXTRACT_CONFIG_DIR: tempDir() })).stdout).base_url,
    ).toBeNull();
    for (const args of [
      ['--version'],
      ['-V'],
      ['serve', '--version'],
      ['listen', '--version'],
      ['watch', '--version'],
      ['config', 'set', '--version'],
      ['get', '-V'],
    ]) {
      const r = await run(args);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout.trim(), args.join(' ')).toMatch(VERSION_LINE);
    }
  });

  it('a mistyped command is named, even with flags of that command after it', async () => {
    const r = await run(['sevre', '--port', '1']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('unknown command "sevre": did you mean "extract serve"?');
    expect(r.stderr).not.toContain("unknown option '--port'");
    // A file of that name is still an input.
    const cwd = tempDir();
    writeFileSync(join(cwd, 'sevre'), 'not a pdf');
    const file = await run(['sevre', '--dry-run', '-q'], {}, cwd);
    expect(file.stderr).not.toContain('did you mean');
  });
});

describe('completion scripts (built CLI)', () => {
  it('bash: sources without a key, registers, and completes commands, options, choices and topics', async () => {
    const path = `${onPath()}:${process.env.PATH ?? ''}`;
    const script = `
source <(extract completion bash) || exit 9
complete -p extract
t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _extract; echo "[$*] \${COMPREPLY[*]}"; }
t extract se
t extract serve --po
t extract config ''
t extract config set ''
t extract --route ''
t extract help exit
t extract completion ''
`;
    const r = await execa('bash', ['-c', script], { env: cleanEnv({ PATH: path }), extendEnv: false, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^complete .*-F _extract extract$/);
    expect(lines).toContain('[extract se] serve');
    expect(lines).toContain('[extract serve --po] --port');
    expect(lines).toContain('[extract config ] set get unset list path');
    expect(lines).toContain('[extract config set ] api_key base_url state_url missing_marker password_file');
    expect(lines).toContain('[extract --route ] auto inline upload');
    expect(lines).toContain('[extract help exit] exit-codes');
    expect(lines).toContain('[extract completion ] bash zsh fish');
  });

  it('bash: files after a flag whose value is a path (-o, --state), nothing after a number, a duration or a key', async () => {
    const path = `${onPath()}:${process.env.PATH ?? ''}`;
    const cwd = tempDir();
    writeFileSync(join(cwd, 'invoice.pdf'), '');
    const script = `
source <(extract completion bash) || exit 9
t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _extract; echo "[$*] \${COMPREPLY[*]}"; }
t extract -o inv
t extract status --state inv
t extract serve --data-dir inv
t extract -c inv
t extract --poll-timeout inv
t extract --api-key inv
t extract watch --rescan inv
t extract listen --max-body inv
`;
    const r = await execa('bash', ['-c', script], {
      env: cleanEnv({ PATH: path }),
      extendEnv: false,
      reject: false,
      cwd,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      '[extract -o inv] invoice.pdf',
      '[extract status --state inv] invoice.pdf',
      '[extract serve --data-dir inv] invoice.pdf',
      '[extract -c inv] ',
      '[extract --poll-timeout inv] ',
      '[extract --api-key inv] ',
      '[extract watch --rescan inv] ',
      '[extract listen --max-body inv] ',
    ]);
    // fish: -r (a value, files offered) for a path, -x (a value, no files) for the rest.
    const fish = (await run(['completion', 'fish'])).stdout;
    expect(fish).toContain("-n '__fish_use_subcommand' -s o -l out -r -d");
    expect(fish).toContain("-n '__fish_use_subcommand' -s c -l concurrency -x -d");
  });

  it('zsh and fish: scripts generated from the same commands (every command and its options named)', async () => {
    const zsh = await run(['completion', 'zsh']);
    expect(zsh.exitCode, zsh.stderr).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef extract\n/);
    expect(zsh.stdout).toContain('compdef _extract extract');
    expect(zsh.stdout).toContain("'serve:run a local emulation of the extraction service'");
    expect(zsh.stdout).toContain("'--max-connections:connections open at once'");
    const fish = await run(['completion', 'fish']);
    expect(fish.exitCode, fish.stderr).toBe(0);
    expect(fish.stdout).toContain("complete -c extract -n '__fish_use_subcommand' -f -a listen");
    expect(fish.stdout).toContain(
      "complete -c extract -n '__fish_use_subcommand' -l route -x -a 'auto inline upload' -d 'force a route'",
    );
    expect(fish.stdout).toContain("-n '__fish_seen_subcommand_from config; and __fish_seen_subcommand_from set' -s V");
    const bad = await run(['completion', 'tcsh']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('bash, zsh, fish');
  });
});

describe('listen and the journal lock (built CLI)', () => {
  it('extract listen | jq -c . works: the banner is on stderr, stdout holds only JSON Lines', async ({ spawnCli }) => {
    const dir = tempDir();
    const listen = spawnCli(['listen', '--port', '0', '--auth', 'none', '--data-dir', join(dir, 'inbox')]);
    const [, url] = await listen.waitFor(/^Listening on (\S+)$/m);
    expect(listen.stderr()).toContain(`Listening on ${url}`);
    const ack = await send(url!, payload({ document_id: 'doc_jq' }));
    expect(ack.status).toBe(200);
    await listen.waitFor(/"document_id":"doc_jq"/, 30_000);
    const lines = listen
      .stdout()
      .split('\n')
      .filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(JSON.parse(lines[0]!).document_id).toBe('doc_jq');
    // With --json the banner is an NDJSON line of stderr, like every other line there.
    const json = spawnCli(['listen', '--port', '0', '--auth', 'none', '--data-dir', join(dir, 'inbox2'), '--json']);
    const [line] = await json.waitFor(/^\{"type":"listening".*$/m);
    expect(JSON.parse(line)).toEqual({ type: 'listening', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//) });
    expect(json.stdout()).toBe('');
  });

  it('another run holding the journal exits 9 (not 2, the usage error), naming the holder', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'a.pdf'), '%PDF-1.4\n');
    writeFileSync(join(cwd, 'j.jsonl'), '');
    // A live holder on this host: the test's own process.
    writeFileSync(
      join(cwd, 'j.jsonl.lock'),
      `${JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() })}\n`,
    );
    const r = await run(['a.pdf', '--state', 'j.jsonl', '--local', '-q'], {}, cwd);
    expect(r.exitCode, r.stderr).toBe(9);
    expect(r.stderr).toContain(`in use by process ${process.pid}`);
  });
});
