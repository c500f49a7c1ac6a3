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
    {
      name: 'phase-through-its-door',
      comment:
        "A batch phase (src/batch/discover, plan, send, finish) is entered by its door, its index.ts: another phase or any other module of src/ imports what the door exports, never a phase's file. An `await import()` of a phase's file is a door of its own (a barrel would load it with every importer).",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/batch/(discover|plan|send|finish)/' },
      to: { path: '^src/batch/(discover|plan|send|finish)/(?!index\\.ts$)', dependencyTypesNot: ['dynamic-import'] },
    },
    {
      name: 'phase-through-another-phases-door',
      comment: 'The same rule between phases: a phase reaches into its own files only.',
      severity: 'error',
      from: { path: '^src/batch/(discover|plan|send|finish)/' },
      to: {
        path: '^src/batch/(discover|plan|send|finish)/(?!index\\.ts$)',
        pathNot: '^src/batch/$1/',
        dependencyTypesNot: ['dynamic-import'],
      },
    },
    {
      name: 'run-journal-opened-by-journal',
      comment:
        "A batch run's journal is opened by journal/run-journal.ts openRunJournal, in one call from the journal's options: where it is (the user's journal, --state, --no-state), the --fresh rule, earlier versions' journals taken in or read behind, and the user's journal discarded when the service never answered. No module of src/batch/ reaches a backend, the user's journal or the earlier journals itself.",
      severity: 'error',
      from: { path: '^src/batch/' },
      to: {
        path: '^src/journal/(earlier|journal-read)\\.ts$|^src/journal/state/(user-journal|file|sqlite|postgres|memory|rescue)\\.ts$',
      },
    },
  ],
  options: {
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
