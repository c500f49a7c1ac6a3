/**
 * `npm run depcheck`, second half: the start-up budget (docs/internals/startup.md) as rules over
 * what two named paths load before their first `await import()`:
 *
 * - START_UP, the start-up file: every command declared (src/cli/commands.ts), its module behind
 *   its one door; `extract help` (and --help on a terminal) loads this and nothing else.
 * - NO_OP_RERUN, the fast path: the batch command's module, which a rerun that finds every file
 *   done goes no further than; what it imports is what such a rerun loads.
 *
 * It runs on .tmp/depcheck/, src/ transpiled file by file (scripts/depcheck-mirror.ts), where
 * type-only imports are gone, as they are at run time; dynamic imports are left out, as they load
 * only when reached. test/cli/startup.proc.test.ts measures the same on the built CLI.
 */
const { builtinModules } = require('node:module');

const START_UP = 'src/cli/main.ts';
const NO_OP_RERUN = 'src/cli/run-action.ts';

const literal = (s) => s.replace(/[/.]/g, '\\$&');
const from = (file) => ({ path: `^${literal(file)}$` });
/** Any module of npm: not ours (src/), not Node's own. */
const NPM = `^(?!src/)(?!(node:)?(${builtinModules.map(literal).join('|')})$)`;
/**
 * Node's modules of requests and servers, of other processes and threads: a client that sends
 * nothing needs none (node:net it may: an output that is a socket, open-stream.ts).
 */
const REQUESTS_AND_PROCESSES = 'http|https|http2|tls|dgram|dns|child_process|worker_threads|cluster';
const node = (names) => `^(node:)?(${names})$`;

module.exports = {
  forbidden: [
    {
      name: 'start-up-loads-commander-only',
      comment: `The start-up file (${START_UP}) loads commander and the flags, nothing else of npm: a package a command needs is imported by its module, behind its door (src/cli/commands.ts).`,
      severity: 'error',
      from: from(START_UP),
      to: { path: NPM, pathNot: '^commander$', reachable: true },
    },
    {
      name: 'start-up-loads-no-network-or-streams',
      comment: `The start-up file (${START_UP}) loads none of Node's network, stream, process or compression modules (fs, path and url are all it needs).`,
      severity: 'error',
      from: from(START_UP),
      to: {
        path: node(`${REQUESTS_AND_PROCESSES}|net|stream|stream/.*|zlib|crypto|sqlite|readline`),
        reachable: true,
      },
    },
    {
      name: 'start-up-loads-no-command-module',
      comment: `The start-up file (${START_UP}) imports no command's module: each is loaded through its one door, the import() in src/cli/commands.ts, when the command runs.`,
      severity: 'error',
      from: from(START_UP),
      to: { path: '^src/cli/[^/]+-action\\.ts$', reachable: true },
    },
    {
      name: 'no-op-rerun-loads-no-npm-package',
      comment: `A rerun that finds every file done (${NO_OP_RERUN}, up to its first await import()) loads no npm package: not undici (the client, the send step), zod (every contract schema), file-type, mime-types, chalk or csv-stringify. Import them where a file is sent, sniffed, validated, coloured or written as CSV.`,
      severity: 'error',
      from: from(NO_OP_RERUN),
      to: { path: NPM, reachable: true },
    },
    {
      name: 'no-op-rerun-loads-no-network-or-processes',
      comment: `A rerun that finds every file done (${NO_OP_RERUN}) loads none of Node's modules of requests, servers, processes or threads: not the HTTP client, the emulator, the receiver or the engine's pool.`,
      severity: 'error',
      from: from(NO_OP_RERUN),
      to: { path: node(REQUESTS_AND_PROCESSES), reachable: true },
    },
  ],
  options: {
    parser: 'swc',
    baseDir: '.tmp/depcheck',
    doNotFollow: { path: 'node_modules' },
    exclude: { dynamic: true },
  },
};
