import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { zipSync } from 'fflate';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { BatchReport } from '../../src/outputs/json-shapes.ts';
import { tempDir } from '../helpers/cli.ts';
import { deployedStandIn } from '../helpers/deployed-stand-in.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { NODE_BIN_DIR, packTarballs, registryEnv, type Tarballs, VERSION } from '../helpers/packed.ts';

/**
 * The README's recipes run as written, outside the clone: their lines are read from the fenced
 * blocks of README.md (so they cannot drift from what is tested), and run by sh from the packed
 * tarballs installed globally into a fresh npm prefix, on the Node the tests run on (24). Only
 * placeholders are filled in: the service's address (a stand-in on 127.0.0.1), its API key,
 * /srv/invoices. The rehearsal, which uses serve's and listen's fixed ports, runs in a network
 * namespace of its own (unshare -rn), so no other process on the machine holds them.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/**
 * The lines of the fenced blocks under the heading `title` (## or ###), up to the next heading, one
 * array per block; a line's trailing comment is dropped, as sh would (a redirect added after it must work).
 */
function blocksUnder(title: string): string[][] {
  const heading = new RegExp(`^#{2,3} ${title.replace(/[`.*+?()[\]]/g, '\\$&')}$`, 'm').exec(README);
  if (heading === null) throw new Error(`README has no section "${title}"`);
  const rest = README.slice(heading.index + heading[0].length);
  const next = rest.search(/^#{2,3} /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^```\w*\n([\s\S]*?)^```/gm)].map((m) =>
    m[1]!
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(/\s+# .*$/, '')),
  );
}

let tarballs: Tarballs;
it.beforeAll(async ({ fileTempDir }) => {
  tarballs = await packTarballs(fileTempDir);
}, 600_000);

/** A shell's environment with nothing of the developer's, npm's global prefix in `prefix`. */
function shellEnv(prefix: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: `${prefix}/bin:${NODE_BIN_DIR}:/usr/sbin:/usr/bin:/bin`,
    HOME: home,
    XDG_STATE_HOME: join(home, '.state'),
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    NO_COLOR: '1',
    ...registryEnv(),
    ...extra,
  };
}

const sh = (script: string, cwd: string, env: Record<string, string>) =>
  execa('sh', ['-c', script], { cwd, env, extendEnv: false, reject: false });

/** Invoices, each of its own content (the journal knows a document by its content): numbers from `first`. */
async function pdfsIn(dir: string, names: string[], first = 1): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const [i, name] of names.entries()) writeFileSync(join(dir, name), await invoicePdf(first + i));
}

describe('README recipes, from the packed tarballs outside the clone', () => {
  it('name no package npx would fetch: no bare npx extract, no --yes with a name', () => {
    const files = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      expect(text, file).not.toMatch(/npx (?!--no -- )[^\n`]*\bextract\b/);
      expect(text, file).not.toMatch(/npx[^\n`]*(--yes|\s-y\b)/);
    }
  });

  it('CI step: Node 24 set up, the client installed from its tarball, the run line', async ({ httpServer }) => {
    const [yaml] = blocksUnder('CI step');
    const text = yaml!.join('\n');
    expect(text).toMatch(/uses: actions\/setup-node@v\d+\n\s+with:\n\s+node-version: 24/);
    const runs = yaml!.filter((l) => /^\s*(- )?run: /.test(l)).map((l) => l.replace(/^\s*(- )?run: /, ''));
    expect(runs).toHaveLength(2);
    const service = await deployedStandIn(httpServer);
    const cwd = tempDir();
    const prefix = tempDir('extract-prefix-');
    mkdirSync(join(cwd, 'tools'));
    copyFileSync(tarballs.client, join(cwd, 'tools', `extract-cli-${VERSION}.tgz`));
    await pdfsIn(join(cwd, 'documents', '2026'), ['a.pdf', 'b.pdf']);
    const env = shellEnv(prefix, tempDir('extract-home-'), {
      EXTRACT_API_KEY: 'ext_ci_secret_key_0001',
      EXTRACT_BASE_URL: service.url,
    });
    for (const run of runs) {
      const result = await sh(run, cwd, env);
      expect(result.exitCode, `${run}\n${result.stderr}`).toBe(0);
    }
    const report = BatchReport.parse(JSON.parse(readFileSync(join(cwd, 'extract-report.json'), 'utf8')));
    expect(report.completed).toBe(2);
    expect(JSON.parse(readFileSync(join(cwd, 'extracted.json'), 'utf8'))).toHaveLength(2);
  });

  it("nightly cron: the jq line lists the night's failures, and the next nights' set-aside ones", async ({
    httpServer,
  }) => {
    const [cron] = blocksUnder('Nightly cron');
    const entry = cron!.find((l) => /^[\d*]/.test(l))!;
    const jq = blocksUnder('Nightly cron')[1]!.find((l) => l.startsWith('jq '))!;
    const service = await deployedStandIn(httpServer, { failTimes: 1000 });
    const dir = tempDir();
    await pdfsIn(join(dir, 'inbox'), ['good.pdf', 'bad.pdf']);
    const command = entry
      .split(/\s+/)
      .slice(5)
      .join(' ')
      .replaceAll('/srv/invoices', dir)
      .replaceAll('https://extract.example.com', service.url)
      .replaceAll('ext_...', 'ext_cron_secret_key_0001');
    const env = shellEnv(tempDir('extract-prefix-'), tempDir('extract-home-'));
    env.PATH = `${join(tarballInstall, 'bin')}:${env.PATH}`;
    for (const night of [1, 2, 3]) {
      await sh(command, dir, env);
      const report = BatchReport.parse(JSON.parse(readFileSync(join(dir, 'last-run.json'), 'utf8')));
      expect(report.documents.map((d) => d.outcome).sort(), `night ${night}`).toContain(
        night === 1 ? 'completed' : 'skipped',
      );
      const listed = await sh(jq, dir, env);
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout, `night ${night}: ${JSON.stringify(report.documents)}`).toContain('inbox/bad.pdf');
      expect(listed.stdout).not.toContain('inbox/good.pdf');
    }
  });

  it('Archives and mail: a zip and a mail in the inbox are a row per document; done/ takes them; the next night one new member pays for itself', async ({
    httpServer,
  }) => {
    const lines = blocksUnder('Archives and mail')[0]!;
    expect(lines).toHaveLength(2);
    const service = await deployedStandIn(httpServer);
    const cwd = tempDir();
    mkdirSync(join(cwd, 'inbox'));
    mkdirSync(join(cwd, 'done'));
    const zip = async (from: number, n: number) =>
      zipSync(
        Object.fromEntries(
          await Promise.all(
            Array.from({ length: n }, async (_, i) => [`2026/inv-${from + i}.pdf`, await invoicePdf(from + i)]),
          ),
        ),
      );
    writeFileSync(join(cwd, 'inbox', 'invoices.zip'), await zip(100, 2));
    const mail = await new MailComposer({
      from: 'supplier@example.com',
      to: 'accounts@example.com',
      subject: 'invoice',
      text: 'attached',
      attachments: [{ filename: 'invoice.pdf', content: await invoicePdf(200) }],
    })
      .compile()
      .build();
    writeFileSync(join(cwd, 'inbox', 'mail.eml'), mail);
    const env = shellEnv(tempDir('extract-prefix-'), tempDir('extract-home-'), {
      EXTRACT_API_KEY: 'ext_archive_secret_key_0001',
      EXTRACT_BASE_URL: service.url,
    });
    env.PATH = `${join(tarballInstall, 'bin')}:${env.PATH}`;
    const first = await sh(lines[0]!, cwd, env);
    expect(first.exitCode, first.stderr).toBe(0);
    const csv = readFileSync(join(cwd, 'invoices.csv'), 'utf8');
    for (const name of [
      'inbox/invoices.zip!2026/inv-100.pdf',
      'inbox/invoices.zip!2026/inv-101.pdf',
      'inbox/mail.eml!invoice.pdf',
    ])
      expect(csv).toContain(name);
    expect(service.charged()).toBe(3);
    const moved = await sh(lines[1]!, cwd, env);
    expect(moved.exitCode, moved.stderr).toBe(0);
    expect(readdirSync(join(cwd, 'done')).sort()).toEqual(['invoices.zip', 'mail.eml']);
    expect(service.charged()).toBe(3);
    // The next night's zip: one invoice more.
    writeFileSync(join(cwd, 'inbox', 'invoices.zip'), await zip(100, 3));
    expect((await sh(lines[1]!, cwd, env)).exitCode).toBe(0);
    expect(service.charged()).toBe(4);
  });

  it('Rehearse on serve, then Receive webhooks beside it, with the integration the README adds', async () => {
    const cwd = tempDir();
    await pdfsIn(join(cwd, 'invoices'), ['one.pdf']);
    await pdfsIn(join(cwd, 'later'), ['two.pdf'], 2);
    const [rehearse] = blocksUnder('Rehearse on `serve`');
    const [listen, integration] = blocksUnder('Receive webhooks');
    const [serveLine, exportLine, batchLine, ...otherServes] = rehearse!;
    expect(serveLine).toMatch(/^extract serve --data-dir \.\/emu\b/);
    const background = (line: string, log: string) => `${line} > ${log} 2>&1 & echo $! > ${log}.pid; wait_for ${log}`;
    const script = [
      'set -e',
      'ip link set lo up',
      // Up to a minute for a server's first line: a loaded machine starts slowly, and a refused port says so at once.
      'wait_for() { i=0; until grep -q Listening "$1"; do i=$((i+1)); if [ $i -gt 600 ] || grep -q "in use" "$1"; then cat "$1"; exit 9; fi; sleep 0.1; done; }',
      'stop() { kill "$(cat "$1.pid")"; while kill -0 "$(cat "$1.pid")" 2>/dev/null; do sleep 0.1; done; }',
      background(serveLine!, 'serve.log'),
      exportLine,
      batchLine,
      listen![0],
      background(listen![1]!, 'listen.log'),
      'stop serve.log',
      integration![0],
      background(integration![1]!, 'serve2.log'),
      'extract ./later/ -o later.csv -q',
      // The delivery reaches listen, which writes its record.
      'i=0; until grep -q two.pdf invoices.csv; do i=$((i+1)); [ $i -gt 600 ] && { cat listen.log serve2.log; exit 8; }; sleep 0.1; done',
      'stop serve2.log',
      'stop listen.log',
      ...otherServes.map((line, i) => `${background(line, `other${i}.log`)}; stop other${i}.log`),
    ].join('\n');
    const env = shellEnv(tarballInstall, tempDir('extract-home-'));
    const result = await execa('unshare', ['-rn', 'sh', '-c', script], { cwd, env, extendEnv: false, reject: false });
    expect(result.exitCode, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(readFileSync(join(cwd, 'serve.log'), 'utf8')).toMatch(/^Listening on http:\/\/127\.0\.0\.1:8787/);
    expect(readFileSync(join(cwd, 'listen.log'), 'utf8')).toContain('Listening on http://127.0.0.1:8788/webhook');
    expect(readFileSync(join(cwd, 'invoices.csv'), 'utf8')).toContain('one.pdf');
  });
});

/** The global prefix the Install recipe's tarball lines install into (client and engine). */
let tarballInstall: string;
it.beforeAll(async ({ fileTempDir }) => {
  const [install] = blocksUnder('Install');
  const lines = install!.filter((l) => l.startsWith('npm install -g ./'));
  expect(lines).toEqual([
    expect.stringContaining(`./extract-cli-${VERSION}.tgz`),
    expect.stringContaining(`./extract-cli-engine-${VERSION}.tgz`),
  ]);
  tarballInstall = fileTempDir('extract-prefix-');
  const env = shellEnv(tarballInstall, fileTempDir('extract-home-'));
  for (const line of lines) {
    const result = await sh(line, tarballs.dir, env);
    expect(result.exitCode, `${line}\n${result.stderr}`).toBe(0);
  }
  const version = await sh('cd / && extract --version', tarballs.dir, env);
  expect(version.stdout).toContain(`extract ${VERSION}`);
}, 600_000);

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}
