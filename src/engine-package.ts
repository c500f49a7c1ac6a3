import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExtractError } from './errors.ts';
import { PACKAGE_ROOT } from './package-root.ts';

/**
 * The engine's heavy packages (pdfjs, canvas, tesseract.js and its language data, the emulator's
 * uploads, static files and SMTP) are dependencies of a second package of this repository,
 * packages/engine, so a client that only sends documents installs none of them. The code that
 * uses them stays in this package's bundle; it loads them from wherever the engine package is,
 * since a global install nests each package's dependencies under it (npm does not hoist across
 * two global packages): import() of a bare name from here would not find them.
 *
 * Where the engine is looked for, first found wins:
 * 1. packages/engine of this clone (npm ci at the root installs its dependencies, hoisted);
 * 2. `extract-cli-engine` as Node resolves it from this package: installed beside it
 *    (globally, or in the same project's node_modules);
 * 3. `extract-cli-engine` in the project of the current directory.
 */
export const ENGINE_PACKAGE = 'extract-cli-engine';

type Loader = { load(specifier: string): Promise<unknown>; resolve(specifier: string): string };
type Found = { manifest: string; version: string };
let found: Found | null | undefined;
let loader: Promise<Loader> | undefined;

/** The engine package's package.json and version, or null when it is not installed. */
function _locate(): Found | null {
  if (found !== undefined) return found;
  const candidates = [
    () => join(PACKAGE_ROOT, 'packages', 'engine', 'package.json'),
    () => createRequire(join(PACKAGE_ROOT, 'package.json')).resolve(`${ENGINE_PACKAGE}/package.json`),
    () => createRequire(join(process.cwd(), 'package.json')).resolve(`${ENGINE_PACKAGE}/package.json`),
  ];
  found = null;
  for (const candidate of candidates) {
    let manifest: string;
    try {
      manifest = candidate();
    } catch {
      continue;
    }
    if (!existsSync(manifest)) continue;
    const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (name !== ENGINE_PACKAGE) continue;
    found = { manifest, version: version ?? '' };
    break;
  }
  return found;
}

function _clientVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The command that installs the engine this client needs, from the tarball a clone's `npm pack --workspaces` writes. */
function _installCommand(version: string): string {
  return `npm install -g ./${ENGINE_PACKAGE}-${version}.tgz`;
}

/** Whether the engine, of this client's version, can be loaded. */
export function engineInstalled(): boolean {
  return _locate()?.version === _clientVersion();
}

/** Stops `what` (`extract serve`, `--local`) before any work when the engine is missing: exit 2 with the install line. */
export function requireEngine(what: string): void {
  const engine = _locate();
  const version = _clientVersion();
  if (engine === null) {
    throw new ExtractError(
      'usage',
      `${what} needs the engine, which is not installed: ${_installCommand(version)} (npm pack --workspaces in a clone of extract ${version} writes it; in a project, npm install it without -g)`,
    );
  }
  if (engine.version !== version) {
    throw new ExtractError(
      'usage',
      `${what} needs the engine ${ENGINE_PACKAGE} ${version}, and ${engine.version} is installed: ${_installCommand(version)} (npm pack --workspaces in a clone of extract ${version} writes it)`,
    );
  }
}

function _loader(): Promise<Loader> {
  requireEngine('the engine');
  loader ??= import(pathToFileURL(join(dirname(_locate()!.manifest), 'index.js')).href) as Promise<Loader>;
  return loader;
}

/** import() of one of the engine's packages, resolved from the engine package. */
export async function importEngine<T>(specifier: string): Promise<T> {
  return (await (await _loader()).load(specifier)) as T;
}

/** The file URL of a file of one of the engine's packages (`pdfjs-dist/package.json`), resolved from the engine package. */
export async function resolveEngineFile(specifier: string): Promise<string> {
  return (await _loader()).resolve(specifier);
}
