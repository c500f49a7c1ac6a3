/**
 * `npm run depcheck`, first half: no import cycle anywhere in src/, type-only imports included
 * (a cycle of types still ties two modules' ideas together). The start-up's rules are
 * .dependency-cruiser.startup.cjs. dependency-cruiser reads TypeScript 7 sources through swc:
 * TypeScript 7 has no JavaScript API for it to use.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: the modules on it cannot be read, tested or loaded one without the other.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
