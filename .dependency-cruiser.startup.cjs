/**
 * `npm run depcheck`, second half: the start-up budget (docs/internals/startup.md) as rules over
 * what each entry loads before its first `await import()`. It runs on .tmp/depcheck/, src/
 * transpiled file by file (scripts/depcheck-mirror.ts), where type-only imports are gone, as they
 * are at run time; dynamic imports are left out, as they load only when reached.
 * test/cli/startup.proc.test.ts measures the same on the built CLI.
 */
const { builtinModules } = require('node:module');

const literal = (s) => s.replace(/[/.]/g, '\\$&');
/** Any module of npm: not ours (src/), not Node's own. */
const NPM = `^(?!src/)(?!(node:)?(${builtinModules.map(literal).join('|')})$)`;

module.exports = {
  forbidden: [
    {
      name: 'help-loads-commander-only',
      comment:
        '`extract --help` (src/cli/main.ts) loads commander and the flags, nothing else of npm: a package a command needs is imported by its action, with await import().',
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: { path: NPM, pathNot: '^commander$', reachable: true },
    },
    {
      name: 'help-loads-no-network-or-streams',
      comment:
        "`extract --help` loads none of Node's network, stream, process or compression modules (fs, path and url are all it needs).",
      severity: 'error',
      from: { path: '^src/cli/main\\.ts$' },
      to: {
        path: '^(node:)?(http|https|http2|net|tls|dgram|dns|stream|stream/.*|child_process|worker_threads|cluster|zlib|crypto|sqlite|readline)$',
        reachable: true,
      },
    },
    {
      name: 'rerun-loads-no-npm-package',
      comment:
        'A rerun that finds every file done (src/cli/run-action.ts up to its first await import()) loads no npm package: not undici, zod, file-type, mime-types, chalk or csv-stringify. Import them where a file is sent, sniffed, validated, coloured or written as CSV.',
      severity: 'error',
      from: { path: '^src/cli/run-action\\.ts$' },
      to: { path: NPM, reachable: true },
    },
    {
      name: 'rerun-loads-no-client-or-schemas',
      comment:
        'A rerun that finds every file done loads neither the HTTP client and the send step nor any contract schema (constants.ts holds no schema), nor the emulator, engine or receiver.',
      severity: 'error',
      from: { path: '^src/cli/run-action\\.ts$' },
      to: {
        path: '^src/(contract/(?!constants\\.ts$)|client/service-client\\.ts$|batch/send/send\\.ts$|emulator/|receiver/|engine/(?!types\\.ts$))',
        reachable: true,
      },
    },
  ],
  options: {
    parser: 'swc',
    baseDir: '.tmp/depcheck',
    doNotFollow: { path: 'node_modules' },
    exclude: { dynamic: true },
  },
};
