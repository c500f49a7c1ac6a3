import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { CLI, cleanEnv } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf, makePdf } from '../helpers/pdf.ts';
import { grayPng, renderGray } from '../helpers/scan.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * What a start-up of the built CLI loads (README: Install, ARCHITECTURE: the bundle): a hook
 * records every file Node loads, and the bundle's files are searched for the markers esbuild
 * leaves of each module it took in ("// node_modules/zod/...", "// src/batch/...").
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A hook (passed to Node by `--import`) that writes the path of every file Node loads into `log`. */
function loadHook(): { importArgs: string[]; log: string } {
  const dir = mkdtempSync(join(tmpdir(), 'extract-startup-'));
  dirs.push(dir);
  const log = join(dir, 'loaded.txt');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
registerHooks({ load(url, context, next) { if (url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); } });
`,
  );
  writeFileSync(log, '');
  return { importArgs: ['--import', pathToFileURL(hook).href], log };
}

async function loadedBy(
  args: string[],
  searched: (file: string) => boolean = () => true,
): Promise<{ files: string[]; modules: string[] }> {
  const { importArgs, log } = loadHook();
  const r = await execa(process.execPath, [...importArgs, CLI, ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  return loadedFrom(log, searched);
}

/** The files a hook's log lists, and the modules of ours and of node_modules bundled in those `searched`. */
function loadedFrom(
  log: string,
  searched: (file: string) => boolean = () => true,
): { files: string[]; modules: string[] } {
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((u) => fileURLToPath(u));
  const modules = files
    .filter(searched)
    // A worktree whose node_modules is a link to another checkout's gets markers such as
    // "// ../main/node_modules/zod/...": read as node_modules/zod/..., or every check here passes vacuously.
    .flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/^\/\/ (?:\.\.\/[^/\s]+\/)?((?:src|node_modules)\/\S+)$/gm)].map(
        (m) => m[1]!,
      ),
    );
  return { files, modules };
}

/** What `extract help` loads: three tests compare against it, one start-up serves them. */
let helpLoads: Promise<{ files: string[]; modules: string[] }> | undefined;
const loadedByHelp = () => {
  helpLoads ??= loadedBy(['help']);
  return helpLoads;
};

const HEAVY = /^node_modules\/(zod|undici|fastify|@fastify|pdfjs-dist|file-type|fast-glob|conf|ajv|pg)\//;

describe('start-up of the built CLI', () => {
  it('--version reads package.json and loads nothing of dist/', async () => {
    const { files } = await loadedBy(['--version']);
    expect(files.map((f) => f.replace(/^.*\/(bin|dist)\//, '$1/'))).toEqual(['bin/extract.js']);
  });

  it('--help off a terminal prints the text the build printed from the bundle, loading nothing of dist/ but that text', async () => {
    const { files } = await loadedBy(['--help']);
    expect(files.map((f) => f.replace(/^.*\/(bin|dist)\//, '$1/'))).toEqual(['bin/extract.js']);
    // The same bytes as the bundle prints now (a build that forgot to print it again would differ).
    const main = pathToFileURL(join(fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)))).href;
    const bundle = await execa(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `await (await import(${JSON.stringify(main)})).runMain(['node', 'extract', '--help']);`,
      ],
      { env: cleanEnv(), extendEnv: false },
    );
    for (const flag of ['--help', '-h']) {
      const copied = await execa(process.execPath, [CLI, flag], { env: cleanEnv(), extendEnv: false });
      expect(copied.stdout, flag).toBe(bundle.stdout);
    }
    expect(bundle.stdout).toMatch(/^Usage: extract/);
  });

  it('help (as --help on a terminal) loads the start-up file and the shared errors, no zod, undici, fastify, pdfjs, file-type or fast-glob', async () => {
    const { files, modules } = await loadedByHelp();
    expect(files.filter((f) => f.includes('/node_modules/'))).toEqual([]);
    expect(files.some((f) => f.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(files.filter((f) => /\/dist\/cli\/(?!main\.js|errors\.js)/.test(f))).toEqual([]);
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([]);
    expect(modules.some((m) => m.startsWith('node_modules/commander/'))).toBe(true);
  });

  it("--help to a pipe loads none of Node's network or stream modules (node:http, net, stream), and a closed pipe is no error", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'extract-builtins-'));
    dirs.push(dir);
    const log = join(dir, 'builtins.txt');
    const hook = join(dir, 'hook.cjs');
    writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, process.moduleLoadList.join('\\n')));\n`,
    );
    // What Node itself loads for nothing (node -e 0) is not counted.
    await execa(process.execPath, ['--require', hook, '-e', '0']);
    const bare = new Set(readFileSync(log, 'utf8').split('\n'));
    for (const args of [['--help'], ['listen', '--help'], ['serve', '--help']]) {
      const r = await execa(process.execPath, ['--require', hook, CLI, ...args], {
        env: cleanEnv(),
        extendEnv: false,
        reject: false,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Usage: extract/);
      const loaded = readFileSync(log, 'utf8')
        .split('\n')
        .filter((m) => !bare.has(m));
      expect(
        loaded.filter((m) => /^NativeModule (http|_http_\w+|net|stream|internal\/streams\/\w+)$/.test(m)),
        args.join(' '),
      ).toEqual([]);
    }
    // A reader gone before the help is written (extract --help | true): no error, exit 0.
    const gone = execa(process.execPath, [CLI, '--help'], { env: cleanEnv(), extendEnv: false, reject: false });
    gone.stdout.destroy();
    const r = await gone;
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });

  it('help loads three files of ours: the launcher, the start-up file and errors.js, which imports nothing', async () => {
    const { files } = await loadedByHelp();
    expect(files.map((f) => f.replace(/^.*\/(bin|dist)\//, '$1/'))).toEqual([
      'bin/extract.js',
      'dist/cli/main.js',
      'dist/cli/errors.js',
    ]);
  });

  it("each command's --help loads no more than help", async () => {
    const root = await loadedByHelp();
    for (const command of ['serve', 'listen', 'get', 'status', 'config', 'help', 'version', 'completion']) {
      const { files } = await loadedBy([command, '--help']);
      expect(files, command).toEqual(root.files);
    }
    // Help topics and a command's --version are text of the start-up file too.
    for (const args of [
      ['help', 'serve'],
      ['help', 'exit-codes'],
      ['serve', '--version'],
    ]) {
      const { files } = await loadedBy(args);
      expect(files, args.join(' ')).toEqual(root.files);
    }
  });

  it("a command loads its own module alone, through its one door: of dist/cli/, the start-up file, errors.js and that command's file", async () => {
    const ofDistCli = (files: string[]) =>
      files
        .filter((f) => /\/dist\/cli\//.test(f))
        .map((f) => f.replace(/^.*\/dist\/cli\//, ''))
        .sort();
    for (const [args, module] of [
      [['config', 'path'], 'config-action.js'],
      [['version'], 'shell-action.js'],
      [['completion', 'bash'], 'shell-action.js'],
    ] as const) {
      const { files } = await loadedBy([...args]);
      expect(ofDistCli(files), args.join(' ')).toEqual(['errors.js', 'main.js', module].sort());
    }
  });

  it('a first run loads only the request parts of undici; a rerun that finds every file done loads neither the HTTP client, the MIME sniffers, zod, chalk (no colours off a terminal) nor (for JSON Lines) the CSV writer', async ({
    emulator,
  }) => {
    const server = await emulator();
    const dir = mkdtempSync(join(tmpdir(), 'extract-rerun-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'in'));
    for (const n of [1, 2]) writeFileSync(join(dir, 'in', `invoice-${n}.pdf`), await invoicePdf(n));
    // The stat cache trusts only stamps over 2 s old (racy-git): younger files are read again.
    const written = statSync(join(dir, 'in', 'invoice-2.pdf')).ctimeMs;
    await sleep(Math.max(0, written + 2100 - Date.now()));
    const args = [
      join(dir, 'in'),
      ...['--base-url', server.url, '--api-key', KEY, '-q'],
      ...['--state', join(dir, 'state.jsonl'), '-o', join(dir, 'out.jsonl')],
    ];
    const first = await loadedBy(args);
    // The first run sends, sniffs and validates (the test would pass vacuously otherwise).
    for (const name of ['undici', 'file-type', 'zod']) {
      expect(
        first.modules.some((m) => m.startsWith(`node_modules/${name}/`)),
        name,
      ).toBe(true);
    }
    // Of undici, a request's parts (src/net/request.ts): not fetch, WebSocket, the mock agents or the caches.
    const notARequest =
      /^node_modules\/undici\/lib\/(mock|cache|web\/(websocket|eventsource|cache)|web\/fetch\/index\.js)/;
    expect(first.modules.filter((m) => notARequest.test(m))).toEqual([]);
    const rerun = await loadedBy(args);
    expect(rerun.modules.some((m) => m.startsWith('src/batch/'))).toBe(true);
    // Its journal index is current and its lock free: no journal text or lock file to validate.
    const notNeeded = /^node_modules\/(undici|file-type|mime-types|mime-db|zod|chalk|csv-stringify)\//;
    expect(rerun.modules.filter((m) => notNeeded.test(m))).toEqual([]);
    expect(rerun.modules.filter((m) => /^src\/contract\/(?!constants\.ts)/.test(m))).toEqual([]);
    expect(
      readFileSync(join(dir, 'out.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ).toHaveLength(2);
    // The same rerun to a CSV file loads the CSV writer, and only it.
    const csv = await loadedBy([...args.slice(0, -1), join(dir, 'out.csv')]);
    expect(new Set(csv.modules.filter((m) => notNeeded.test(m)).map((m) => m.split('/')[1]))).toEqual(
      new Set(['csv-stringify']),
    );
    expect(readFileSync(join(dir, 'out.csv'), 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('a --local run of text PDFs never loads OCR (tesseract.js, the scan module); a scan does', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'extract-ocr-startup-'));
    dirs.push(dir);
    mkdirSync(join(dir, 'text'));
    mkdirSync(join(dir, 'scans'));
    writeFileSync(join(dir, 'text', 'invoice.pdf'), await invoicePdf(1));
    const scan = await renderGray(await makePdf([['Invoice number INV-1234', '', 'Total 99.50']]), 200);
    writeFileSync(join(dir, 'scans', 'scan.png'), await grayPng(scan));
    // @napi-rs/canvas is left out: pdfjs-dist itself loads it in Node at import (its DOMMatrix), text or not.
    const ocr = (r: { files: string[]; modules: string[] }) => [
      ...r.files.filter((f) => /\/node_modules\/(tesseract\.js|tesseract\.js-core|@tesseract\.js-data)\//.test(f)),
      ...r.modules.filter((m) => /^src\/engine\/(scan|ocr)\.ts$/.test(m)),
    ];
    const run = (name: string) => [
      '--local',
      join(dir, name),
      '-q',
      ...['--state', join(dir, `${name}.jsonl`), '-o', join(dir, `${name}.json`)],
    ];
    const text = await loadedBy(run('text'));
    // The text run read its PDF (through pdfjs) without any of OCR.
    expect(text.files.some((f) => f.includes('/node_modules/pdfjs-dist/'))).toBe(true);
    expect(ocr(text)).toEqual([]);
    const scanned = await loadedBy(run('scans'));
    expect(ocr(scanned).length).toBeGreaterThan(0);
    expect(readFileSync(join(dir, 'scans.json'), 'utf8')).toContain('INV-1234');
  }, 180_000);

  it("a started extract serve loads neither the batch client nor the engine's reader (pdfjs, which only its engine processes load)", async ({
    spawnNode,
  }) => {
    const { importArgs, log } = loadHook();
    const serve = spawnNode([...importArgs, CLI, 'serve', '--port', '0', '--listen-port', '0', '--in-memory']);
    await serve.waitFor(/^Try: /m);
    // Beyond the start-up file, which every command loads (it holds the flags' default constants).
    const { files, modules } = loadedFrom(log, (f) => !f.endsWith('/dist/cli/main.js'));
    expect(modules.some((m) => m.startsWith('src/emulator/'))).toBe(true);
    expect(files.filter((f) => f.includes('/node_modules/pdfjs-dist/'))).toEqual([]);
    expect(modules.filter((m) => /^src\/(batch|engine\/(extract|pdf-text|ocr))/.test(m))).toEqual([]);
  });

  it('extract serve does not load the batch client', async () => {
    // Beyond the start-up file, which every command loads (it holds the flags' default constants).
    const { modules } = await loadedBy(['serve', '--print-config'], (f) => !f.endsWith('/dist/cli/main.js'));
    expect(modules.some((m) => m.startsWith('src/emulator/'))).toBe(true);
    expect(modules.filter((m) => m.startsWith('src/batch/') || m.startsWith('node_modules/fast-glob/'))).toEqual([]);
  });
});
