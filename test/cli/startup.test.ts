import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, cleanEnv } from '../helpers/cli.ts';

/**
 * What a start-up of the built CLI loads (README: Install, ARCHITECTURE: the bundle): a hook
 * records every file Node loads, and the bundle's files are searched for the markers esbuild
 * leaves of each module it took in ("// node_modules/zod/...", "// src/batch/...").
 */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function loadedBy(
  args: string[],
  searched: (file: string) => boolean = () => true,
): Promise<{ files: string[]; modules: string[] }> {
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
  const r = await execa(process.execPath, ['--import', pathToFileURL(hook).href, CLI, ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((u) => fileURLToPath(u));
  const modules = files
    .filter(searched)
    .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/^\/\/ ((?:src|node_modules)\/\S+)$/gm)].map((m) => m[1]!));
  return { files, modules };
}

const HEAVY = /^node_modules\/(zod|undici|fastify|@fastify|pdfjs-dist|file-type|fast-glob|conf|ajv|pg)\//;

describe('start-up of the built CLI', () => {
  it('--version reads package.json and loads nothing of dist/', async () => {
    const { files } = await loadedBy(['--version']);
    expect(files.map((f) => f.replace(/^.*\/(bin|dist)\//, '$1/'))).toEqual(['bin/extract.js']);
  });

  it('--help loads the start-up file and the shared errors, no zod, undici, fastify, pdfjs, file-type or fast-glob', async () => {
    const { files, modules } = await loadedBy(['--help']);
    expect(files.filter((f) => f.includes('/node_modules/'))).toEqual([]);
    expect(files.some((f) => f.endsWith('/dist/cli/main.js'))).toBe(true);
    expect(files.filter((f) => /\/dist\/cli\/(?!main\.js|errors\.js)/.test(f))).toEqual([]);
    expect(modules.filter((m) => HEAVY.test(m))).toEqual([]);
    expect(modules.some((m) => m.startsWith('node_modules/commander/'))).toBe(true);
  });

  it("each command's --help loads no more than --help", async () => {
    const root = await loadedBy(['--help']);
    for (const command of ['serve', 'listen', 'get', 'status', 'config']) {
      const { files } = await loadedBy([command, '--help']);
      expect(files, command).toEqual(root.files);
    }
  });

  it('extract serve does not load the batch client', async () => {
    // Beyond the start-up file, which every command loads (it holds the flags' default constants).
    const { modules } = await loadedBy(['serve', '--print-config'], (f) => !f.endsWith('/dist/cli/main.js'));
    expect(modules.some((m) => m.startsWith('src/emulator/'))).toBe(true);
    expect(modules.filter((m) => m.startsWith('src/batch/') || m.startsWith('node_modules/fast-glob/'))).toEqual([]);
  });
});
