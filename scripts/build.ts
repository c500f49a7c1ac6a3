/**
 * `npm run build`: the CLI as one bundle (esbuild), so a start-up loads a few files instead of
 * some 430 ESM modules of ours and our dependencies. Two passes:
 *
 * - The start-up: dist/cli/main.js, what bin/extract.js imports, is one file holding commander,
 *   every command's flags and the constants their defaults come from: `extract --help` reads it
 *   and dist/cli/errors.js, nothing else. Its import()s of the commands' actions stay imports of
 *   the second pass's entries. (One pass with code splitting made --help load 17 files: a chunk
 *   per set of importers of each small shared module.)
 * - The rest, split: each action (dist/cli/*-action.js, the config store and commands), the
 *   engine's worker (dist/engine/worker.js, a file of its own for worker threads) and errors.js
 *   are entries; code they share, and what they load lazily, are chunks in dist/chunks/.
 *   errors.ts is one module for both passes, so `instanceof ExtractError` holds across them;
 *   the other modules the start-up copies (constants, unit formatting, redaction) hold no state.
 * - External, loaded from node_modules as installed: fastify (`extract serve` and `extract
 *   listen`; its logger resolves files of its own at run time) and pg (an optional native binding
 *   behind a require): the package's only runtime dependencies, everything else is in the bundle.
 * - The engine's packages (pdfjs, canvas, OCR, the emulator's uploads, static files and SMTP) are
 *   another package's dependencies, packages/engine, loaded through src/engine-package.ts from
 *   wherever that package is installed; an import of one by name fails the build.
 * - CommonJS dependencies (commander, undici, fast-glob...) call require(); an ESM bundle gets a
 *   real one from createRequire.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
/** dist/, or another folder for trying a change while tests run on dist/. */
const OUT = process.argv[2] ?? join(ROOT, 'dist');

const EXTERNAL = ['fastify', 'pg', 'pg-native'];

const ROOT_PACKAGES = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: object };
/**
 * The dependencies of packages/engine: only src/engine-package.ts loads them, from that package's
 * folder. One the client lists too (mailparser: the batch reads mail) is bundled into the client.
 */
const ENGINE_DEPENDENCIES = Object.keys(
  (JSON.parse(readFileSync(join(ROOT, 'packages/engine/package.json'), 'utf8')) as { dependencies: object })
    .dependencies,
).filter((name) => !(name in ROOT_PACKAGES.devDependencies));
const enginePackagesThroughLoader: Plugin = {
  name: 'engine-packages-through-loader',
  setup(b) {
    b.onResolve({ filter: /^[@a-z]/ }, (args) => {
      const name = args.path
        .split('/')
        .slice(0, args.path.startsWith('@') ? 2 : 1)
        .join('/');
      if (!ENGINE_DEPENDENCIES.includes(name)) return undefined;
      return {
        errors: [
          {
            text: `${relative(ROOT, args.importer)} imports ${args.path}, a dependency of packages/engine: load it with importEngine (src/engine-package.ts), which finds it where the engine is installed`,
          },
        ],
      };
    });
  },
};

/**
 * commander imports node:child_process, and with it net, dgram and the stream machinery (some 40
 * of Node's own modules, a third of `extract --help`'s time), only to spawn executable
 * subcommands, which extract does not have. Its import gets a stand-in that says so if ever called.
 */
const noChildProcessInCommander: Plugin = {
  name: 'no-child-process-in-commander',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]node_modules[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'commander-child-process', namespace: 'stand-in' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'stand-in' }, () => ({
      contents: "export default { spawn() { throw new Error('extract has no executable subcommands'); } };",
      loader: 'js',
    }));
  },
};

/**
 * An ESM import of a Node module runs every lazy getter of its exports (node:fs loads its
 * streams, util its diff and colours, which open stderr...): a sixth of `--help`. In the start-up,
 * each `import { a, b } from 'node:x'` takes those names from process.getBuiltinModule('node:x')
 * instead, which runs no getter. A namespace import (`* as`) keeps Node's own import.
 */
const builtinsWithoutGetters: Plugin = {
  name: 'builtins-without-getters',
  setup(b) {
    const builtins = new Set(builtinModules);
    b.onResolve({ filter: /^(node:)?[a-z_/]+$/ }, (args) => {
      const bare = args.path.replace(/^node:/, '');
      if (args.kind !== 'import-statement' || !builtins.has(bare)) return undefined;
      const names = _importedNames(readFileSync(args.importer, 'utf8'), args.path);
      return names === undefined ? undefined : { path: `node:${bare}:${names.join(',')}`, namespace: 'builtin' };
    });
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (args) => {
      const [, name, list] = /^(node:[a-z_/]+):(.*)$/.exec(args.path)!;
      const names = list!.split(',').filter((n) => n !== '' && n !== 'default');
      return {
        contents: [
          `const m = process.getBuiltinModule(${JSON.stringify(name)});`,
          'export default m;',
          ...names.map((n) => `export const ${n} = m.${n};`),
        ].join('\n'),
        loader: 'js',
      };
    });
  },
};

/** The names `source` imports from `specifier` (types left out), or undefined for a namespace import. */
function _importedNames(source: string, specifier: string): string[] | undefined {
  const quoted = specifier.replace(/[/]/g, '\\/');
  const statements = source.matchAll(new RegExp(`import\\s+(?!type\\s)([^;]*?)\\s+from\\s+['"]${quoted}['"]`, 'g'));
  const names = new Set<string>();
  for (const [, clause] of statements) {
    if (clause!.includes('*')) return undefined;
    for (const part of clause!.replace(/[{}]/g, ',').split(',')) {
      const spec = part.trim();
      if (spec === '' || spec.startsWith('type ')) continue;
      // "a as b" imports a; a bare name before the braces is the default import.
      names.add(
        clause!.trim().startsWith(spec) && !clause!.trim().startsWith('{') ? 'default' : spec.split(/\s+as\s+/)[0]!,
      );
    }
  }
  return [...names];
}

/**
 * undici's index loads all of undici (fetch, WebSocket, the mock agents, the caches) where a request
 * needs only its dispatcher and its API: src/net/request.ts, the one module that imports undici's
 * functions, gets scripts/undici-request-only.cjs under that name, which loads those parts alone.
 * Any other import of undici fails the build, rather than finding the name missing at run time.
 */
const REQUEST_MODULE = join(ROOT, 'src/net/request.ts');
const undiciRequestOnly: Plugin = {
  name: 'undici-request-only',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      args.importer === REQUEST_MODULE
        ? { path: join(ROOT, 'scripts/undici-request-only.cjs') }
        : {
            errors: [
              {
                text: `${relative(ROOT, args.importer)} imports undici: import its parts through src/net/request.ts, which the build gives only those`,
              },
            ],
          },
    );
  },
};

/** The second pass's entries, each a file in dist/ the start-up may import() by that name. */
const LAZY_ENTRIES: Record<string, string> = {
  'cli/errors': 'src/errors.ts',
  'cli/run-action': 'src/cli/run-action.ts',
  'cli/get-action': 'src/cli/get-action.ts',
  'cli/status-action': 'src/cli/status-action.ts',
  'cli/serve-action': 'src/cli/serve-action.ts',
  'cli/listen-action': 'src/cli/listen-action.ts',
  'cli/watch-action': 'src/cli/watch-action.ts',
  'cli/shell-action': 'src/cli/shell-action.ts',
  'cli/journal-action': 'src/cli/journal-action.ts',
  'cli/config-commands': 'src/config/commands.ts',
  'cli/config-store': 'src/config/store.ts',
  'engine/worker': 'src/engine/worker.ts',
};

/** In the start-up pass, an import of a second-pass entry (errors.ts included) stays an import of its file. */
const lazyEntriesStayOutside: Plugin = {
  name: 'lazy-entries-stay-outside',
  setup(b) {
    const byPath = new Map(Object.entries(LAZY_ENTRIES).map(([name, src]) => [join(ROOT, src), name]));
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      const name = byPath.get(resolve(args.resolveDir, args.path));
      return name === undefined ? undefined : { path: `./${name.replace(/^cli\//, '')}.js`, external: true };
    });
  },
};

/**
 * In the second pass, every import of errors.ts stays an import of the file dist/cli/errors.js
 * (its path from each output file is written in after the build, below), which a third pass
 * builds from errors.ts alone: as an entry of the split pass, esbuild moved the module, which
 * several entries share, into a chunk and left the entry a re-export of it and an import of the
 * chunk of its helpers, and `extract --help` loaded three files through Node's ESM loader, not one.
 */
const ERRORS_SOURCE = join(ROOT, 'src/errors.ts');
const ERRORS_PLACEHOLDER = 'extract-errors-module-path';
const errorsStayOneFile: Plugin = {
  name: 'errors-stay-one-file',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) =>
      resolve(args.resolveDir, args.path) === ERRORS_SOURCE ? { path: ERRORS_PLACEHOLDER, external: true } : undefined,
    );
  },
};

/** Writes the path of dist/cli/errors.js, from each file of the second pass, where the placeholder stands. */
function pointAtErrorsFile(files: string[]): void {
  const target = join(OUT, 'cli/errors.js');
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes(ERRORS_PLACEHOLDER)) continue;
    const path = relative(dirname(file), target).split(sep).join('/');
    writeFileSync(
      file,
      text.replaceAll(`"${ERRORS_PLACEHOLDER}"`, JSON.stringify(path.startsWith('.') ? path : `./${path}`)),
    );
  }
}

const COMMON = {
  absWorkingDir: ROOT,
  outdir: OUT,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22.13',
  external: EXTERNAL,
  sourcemap: 'linked',
  legalComments: 'linked',
  // CommonJS dependencies call require(); this is a real one, taken without an ESM import of node:module.
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
} as const;

// esbuild came with the bundle: a node_modules installed before it says so plainly.
const { build } = await import('esbuild').catch((err: unknown) => {
  process.stderr.write(`build: esbuild is not installed (${String(err)}): run npm ci, then npm run build again\n`);
  process.exit(2);
});
rmSync(OUT, { recursive: true, force: true });
const results = await Promise.all([
  build({
    ...COMMON,
    entryPoints: { 'cli/main': 'src/cli/main.ts' },
    plugins: [
      noChildProcessInCommander,
      lazyEntriesStayOutside,
      builtinsWithoutGetters,
      undiciRequestOnly,
      enginePackagesThroughLoader,
    ],
  }),
  build({
    ...COMMON,
    entryPoints: Object.fromEntries(Object.entries(LAZY_ENTRIES).filter(([name]) => name !== 'cli/errors')),
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [noChildProcessInCommander, errorsStayOneFile, undiciRequestOnly, enginePackagesThroughLoader],
  }),
  // errors.ts alone, a file of its own that imports nothing (see errorsStayOneFile).
  build({ ...COMMON, entryPoints: { 'cli/errors': 'src/errors.ts' } }),
]);
pointAtErrorsFile(
  Object.keys(results[1].metafile.outputs)
    .filter((file) => file.endsWith('.js'))
    .map((file) => resolve(ROOT, file)),
);
writeHelpText();
const outputs = results.flatMap((r) => Object.entries(r.metafile.outputs)).filter(([file]) => file.endsWith('.js'));
const bytes = outputs.reduce((sum, [, o]) => sum + o.bytes, 0);
process.stderr.write(`build: ${outputs.length} files in ${OUT}, ${(bytes / 1e6).toFixed(1)} MB of JavaScript\n`);

/**
 * `extract --help` to a stdout that is not a terminal (a pipe, a file) is always the same text:
 * commander's 80 columns, no colours (cli/main.ts helpOutput). The built program prints it once
 * here, into cli/help.txt, and bin/extract.js copies that file as it answers --version, without
 * loading the bundle or building the program (some 30% of a start-up beside `node -e 0`'s). A
 * terminal's help, whose width is the terminal's, still goes the long way.
 */
function writeHelpText(): void {
  const main = pathToFileURL(join(OUT, 'cli/main.js')).href;
  const text = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await (await import(${JSON.stringify(main)})).runMain(['node', 'extract', '--help']);`,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (!text.startsWith('Usage: extract')) throw new Error(`build: --help printed no help: ${text.slice(0, 200)}`);
  writeFileSync(join(OUT, 'cli/help.txt'), text);
}
