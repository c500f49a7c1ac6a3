import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const MODULE = new URL('../../src/cli/warnings.ts', import.meta.url).href;

describe("Node's warnings", () => {
  it("node:sqlite's experimental warning (Node 22) is not printed; every other warning still is", async () => {
    const script = `
      const { hideSqliteExperimentalWarning } = await import(${JSON.stringify(MODULE)});
      hideSqliteExperimentalWarning();
      process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
      process.emitWarning('Something else is experimental', 'ExperimentalWarning');
      process.emitWarning('a deprecated call', 'DeprecationWarning');
    `;
    const run = await execa(process.execPath, ['--input-type=module', '-e', script], { reject: false });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/SQLite/);
    expect(run.stderr).toMatch(/ExperimentalWarning: Something else is experimental/);
    expect(run.stderr).toMatch(/DeprecationWarning: a deprecated call/);
  });
});
