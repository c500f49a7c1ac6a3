import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, execaSync } from 'execa';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.ts';

/**
 * scripts/pretest.sh, which `npm test` runs first (the README's two lines are the whole
 * set-up): on a machine missing chromium, wrk, PostgreSQL..., it installs Debian's packages when
 * it may (root, apt-get), and otherwise stops at once naming the exact command. It runs here on
 * a PATH of stand-ins only (id, apt-get, the tools), and a root of its own for the absolute
 * paths (/usr/bin/chromium-headless-shell, /usr/bin/time, /usr/lib/postgresql/N/bin/initdb): nothing is installed.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'pretest.sh');
const ALL = 'chromium-headless-shell wrk curl time postgresql pgbouncer bsdutils qpdf';

function machine(options: { uid: number; aptGet?: 'installs' | 'fails' | 'absent'; present?: boolean }) {
  const dir = tempDir('extract-pretest-');
  const bin = join(dir, 'bin');
  const root = join(dir, 'root');
  const log = join(dir, 'apt-get.log');
  mkdirSync(bin);
  mkdirSync(root);
  const script = (name: string, body: string): void =>
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
  // What installing the packages leaves: the commands on PATH, the files at their paths.
  const install = [
    ...['wrk', 'curl', 'pgbouncer', 'script', 'qpdf'].map(
      (t) => `printf '#!/bin/sh\\n' > ${join(bin, t)}; /bin/chmod +x ${join(bin, t)}`,
    ),
    `/bin/mkdir -p ${root}/usr/bin ${root}/usr/lib/postgresql/15/bin`,
    ...['usr/bin/chromium-headless-shell', 'usr/bin/time', 'usr/lib/postgresql/15/bin/initdb'].map(
      (f) => `printf '#!/bin/sh\\n' > ${root}/${f}; /bin/chmod +x ${root}/${f}`,
    ),
  ].join('\n');
  script('id', `[ "$1" = -u ] && echo ${options.uid}`);
  if ((options.aptGet ?? 'installs') !== 'absent')
    script(
      'apt-get',
      `echo "$*" >> ${log}\n${options.aptGet === 'fails' ? 'exit 100' : `[ "$1" = install ] && { ${install}; }\nexit 0`}`,
    );
  if (options.present) execaSync('/bin/bash', ['-c', install]);
  const run = () =>
    execa('/bin/bash', [SCRIPT], {
      env: { PATH: bin, EXTRACT_PRETEST_ROOT: root },
      extendEnv: false,
      reject: false,
    });
  return { run, aptCalls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

describe('npm test: pretest (scripts/pretest.sh)', () => {
  it('everything present: nothing said, nothing installed, exit 0', async () => {
    const m = machine({ uid: 0, present: true });
    const r = await m.run();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(m.aptCalls()).toEqual([]);
  });

  it('root with apt-get: installs what is missing (Debian packages), checks again, exit 0', async () => {
    const m = machine({ uid: 0 });
    const r = await m.run();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`pretest: installing what the test suite needs: ${ALL}`);
    expect(m.aptCalls()).toEqual(['update', `install -y ${ALL}`]);
  });

  it('not root: stops at once, naming the exact command, installs nothing', async () => {
    const m = machine({ uid: 1000 });
    const r = await m.run();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`missing here: ${ALL}`);
    expect(r.stderr).toContain(`  sudo sh -c 'apt-get update && apt-get install -y ${ALL}'`);
    expect(m.aptCalls()).toEqual([]);
  });

  it('an install that fails, or no apt-get at all: exit 1 with what to run, never a silent skip', async () => {
    const failing = machine({ uid: 0, aptGet: 'fails' });
    const r = await failing.run();
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`  apt-get update && apt-get install -y ${ALL}`);
    const none = machine({ uid: 0, aptGet: 'absent' });
    const n = await none.run();
    expect(n.exitCode).toBe(1);
    expect(n.stderr).toContain('no apt-get');
  });

  it('npm test runs it first, and .ci/run installs nothing of its own', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.pretest).toBe('bash scripts/pretest.sh');
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci).not.toMatch(/apt-get|apk |yum |dnf /);
    expect(ci).toContain('npm ci && npm test');
  });
});
