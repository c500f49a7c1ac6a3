/**
 * `npm run build`: the CLI as one bundle (esbuild), so a start-up loads a few files instead of
 * some 430 ESM modules of ours and our dependencies.
 *
 * - Two entries: dist/cli/main.js (what bin/extract.js imports) and dist/engine/worker.js (the
 *   engine's worker threads need a file of their own). Every import() of the source stays a
 *   split point, so `extract --help` loads only commander and the flag lists, and each command
 *   only what it uses; shared code and lazily loaded parts are chunks in dist/chunks/.
 * - External, loaded from node_modules as installed: the packages only `extract serve` and
 *   `extract listen` use (their start-up is not on a batch's path, and fastify's logger and
 *   pdfjs resolve files of their own at run time: pdfjs its worker, standard fonts and CMaps,
 *   which the app also serves), and pg (an optional native binding behind a require).
 * - CommonJS dependencies (commander, undici, fast-glob...) call require(); an ESM bundle gets a
 *   real one from createRequire.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
/** dist/, or another folder for trying a change while tests run on dist/. */
const OUT = process.argv[2] ?? join(ROOT, 'dist');

const EXTERNAL = ['pdfjs-dist', 'fastify', '@fastify/*', 'smtp-server', 'mailparser', 'pg', 'pg-native'];

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

rmSync(OUT, { recursive: true, force: true });
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { 'cli/main': 'src/cli/main.ts', 'engine/worker': 'src/engine/worker.ts' },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22.12',
  external: EXTERNAL,
  sourcemap: 'linked',
  legalComments: 'linked',
  banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  plugins: [noChildProcessInCommander],
  metafile: true,
  logLevel: 'warning',
});
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
const bytes = outputs.reduce((sum, [, o]) => sum + o.bytes, 0);
process.stderr.write(`build: ${outputs.length} files in dist/, ${(bytes / 1e6).toFixed(1)} MB of JavaScript\n`);
