import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { type TempDir, tempDir } from './cli.ts';

/**
 * The package as a user installs it outside the clone: the tarballs `npm pack --workspaces
 * --include-workspace-root` writes (the client, extract-cli, and the engine, extract-cli-engine),
 * installed from the registry into a fresh folder under the system's temp directory. Packed with
 * --ignore-scripts: the build's `prepare` would remake dist/ under the other tests' feet (npm test
 * builds first).
 */
const ROOT = join(import.meta.dirname, '..', '..');
export const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export type Tarballs = { dir: string; client: string; engine: string };

/** `npm pack` of the workspaces into a folder `folder` makes (a test's by default; `fileTempDir` in it.beforeAll). */
export async function packTarballs(folder: TempDir = tempDir): Promise<Tarballs> {
  const dir = folder('extract-pack-');
  await execa(
    'npm',
    ['pack', '--workspaces', '--include-workspace-root', '--ignore-scripts', '--pack-destination', dir],
    {
      cwd: ROOT,
    },
  );
  return {
    dir,
    client: join(dir, `extract-cli-${VERSION}.tgz`),
    engine: join(dir, `extract-cli-engine-${VERSION}.tgz`),
  };
}

/** The folder of the Node running the tests (24), first on a PATH, so `#!/usr/bin/env node` finds it. */
export const NODE_BIN_DIR = dirname(process.execPath);

/** `npm install --omit=dev` of the tarballs into a new project folder (outside the clone, made by `folder`); returns it. */
export async function installInProject(tarballs: string[], folder: TempDir = tempDir): Promise<string> {
  const project = folder('extract-install-');
  writeFileSync(join(project, 'package.json'), '{ "name": "a-project", "private": true }\n');
  await execa('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', ...tarballs], { cwd: project });
  return project;
}

/**
 * What npm needs of this machine's environment to reach the registry (its certificates, a proxy,
 * the user's npm config) for a shell whose environment is otherwise the test's own.
 */
export function registryEnv(): Record<string, string> {
  const kept = Object.entries(process.env).filter(([name]) =>
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy)$/i.test(name),
  );
  return {
    ...(Object.fromEntries(kept) as Record<string, string>),
    npm_config_userconfig: process.env.npm_config_userconfig ?? join(homedir(), '.npmrc'),
  };
}

/** `du` of a folder, in bytes (what the disk holds, as people read `du -sh`). */
export function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-sk', dir], { encoding: 'utf8' }).split('\t')[0]) * 1024;
}
