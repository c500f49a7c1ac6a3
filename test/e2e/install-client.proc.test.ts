import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { cleanEnv, tempDir } from '../helpers/cli.ts';
import { deployedStandIn } from '../helpers/deployed-stand-in.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { diskBytes, installInProject, NODE_BIN_DIR, packTarballs, type Tarballs, VERSION } from '../helpers/packed.ts';

/**
 * A client-only install (README: Install): the tarball of extract-cli alone, installed from the
 * registry into a fresh folder outside the clone, holds what batch, watch, listen, get and status
 * need and none of the engine's packages (OCR models, canvas, pdfjs, the emulator's uploads and
 * SMTP); `extract serve` and `--local` say in one line how to add the engine, whose tarball then
 * makes them work.
 */
const CLIENT_ONLY_LIMIT = 40 * 1024 * 1024;

let tarballs: Tarballs;
let project: string;
it.beforeAll(async ({ fileTempDir }) => {
  tarballs = await packTarballs(fileTempDir);
  project = await installInProject([tarballs.client], fileTempDir);
}, 600_000);

const bin = () => join(project, 'node_modules', '.bin', 'extract');
const run = (args: string[], extra: Record<string, string> = {}, cwd = tempDir()) =>
  execa(bin(), args, {
    cwd,
    env: cleanEnv({ PATH: `${NODE_BIN_DIR}:/usr/bin:/bin`, ...extra }),
    extendEnv: false,
    reject: false,
  });

describe('a client-only install', () => {
  it('is under 40 MB of node_modules, without the engine packages', () => {
    const modules = join(project, 'node_modules');
    expect(diskBytes(modules)).toBeLessThan(CLIENT_ONLY_LIMIT);
    for (const heavy of ['pdfjs-dist', 'tesseract.js', '@napi-rs/canvas', '@tesseract.js-data/eng', 'smtp-server'])
      expect(existsSync(join(modules, heavy)), heavy).toBe(false);
  });

  it('answers --version and --help from outside the clone', async () => {
    const version = await run(['--version']);
    expect(version.stdout).toContain(`extract ${VERSION} (node v`);
    const help = await run(['--help']);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: extract');
  });

  it('on a Node older than 22.13, says to install Node 24, not npx (which would fetch another package here)', async () => {
    // This Node made to say it is 20, as the system Node of many machines is, before bin/extract.js runs.
    const olderNode =
      "data:text/javascript,Object.defineProperty(process,'versions',{value:{...process.versions,node:'20.20.2'}});" +
      "Object.defineProperty(process,'version',{value:'v20.20.2'})";
    const result = await execa(
      process.execPath,
      ['--import', olderNode, join(project, 'node_modules', 'extract-cli', 'bin', 'extract.js'), '--version'],
      {
        cwd: tempDir(),
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
      },
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('extract needs Node.js 22.13 or newer (node:sqlite); this is v20.20.2.');
    expect(result.stderr).toContain('Install Node.js 24');
    expect(result.stderr).not.toContain('npx');
  });

  it('sends a batch to the service and writes its records', async ({ httpServer }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = tempDir();
    mkdirSync(join(cwd, 'inbox'));
    writeFileSync(join(cwd, 'inbox', 'a.pdf'), await invoicePdf(1));
    writeFileSync(join(cwd, 'inbox', 'b.pdf'), await invoicePdf(2));
    const result = await run(
      ['inbox/', '-o', 'out.jsonl', '-q'],
      { EXTRACT_BASE_URL: service.url, EXTRACT_API_KEY: 'ext_stand_in_key_0001' },
      cwd,
    );
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    const records = readFileSync(join(cwd, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.status)).toEqual(['completed', 'completed']);
  });

  it("--max-credits, which needs pages counted before sending, stops with the engine's install line, nothing sent", async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = tempDir();
    writeFileSync(join(cwd, 'a.pdf'), await invoicePdf(1, 3));
    const result = await run(
      ['a.pdf', '--max-credits', '2', '-o', 'out.jsonl'],
      { EXTRACT_BASE_URL: service.url, EXTRACT_API_KEY: 'ext_stand_in_key_0001' },
      cwd,
    );
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(
      `--max-credits needs the engine, which is not installed: npm install -g ./extract-cli-engine-${VERSION}.tgz`,
    );
    expect(service.posts.size).toBe(0);
  });

  it('extract serve and --local print the one command that installs the engine, exit 2', async () => {
    for (const args of [['serve'], ['--local', 'a.pdf']]) {
      const result = await run(args);
      expect(result.exitCode).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(
        `needs the engine, which is not installed: npm install -g ./extract-cli-engine-${VERSION}.tgz`,
      );
      expect(result.stdout).toBe('');
    }
  });

  it('with the engine tarball installed beside it, extract serve starts', async () => {
    const full = await installInProject([tarballs.client, tarballs.engine]);
    const serve = execa(
      join(full, 'node_modules', '.bin', 'extract'),
      ['serve', '--port', '0', '--listen-port', '0', '--in-memory'],
      {
        cwd: tempDir(),
        env: cleanEnv({ PATH: `${NODE_BIN_DIR}:/usr/bin:/bin` }),
        extendEnv: false,
        reject: false,
      },
    );
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let out = '';
        serve.stdout!.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        void serve.then((r) => reject(new Error(`serve exited ${r.exitCode}: ${out}${r.stderr}`)));
      });
      expect(first).toMatch(/^Listening on http:\/\/127\.0\.0\.1:\d+/);
    } finally {
      serve.kill('SIGTERM');
      await serve;
    }
  });
});
