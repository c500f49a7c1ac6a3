import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, cleanEnv, tempDir } from '../helpers/cli.ts';

/**
 * Installing outside the clone (README: Install): the package holds what the binary needs, and
 * the binary does not depend on the working directory. (The install itself, `npm install -g`
 * of the tarball, needs the registry for the dependencies: it was run by hand, see README.)
 */
describe('install', () => {
  it("npm pack ships the binary, the built code and the application's files", async () => {
    const root = new URL('../..', import.meta.url).pathname;
    const packed = await execa('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    const files = new Set(
      (JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path),
    );
    for (const f of [
      'bin/extract.js',
      'dist/cli/main.js',
      'dist/engine/worker.js',
      'package.json',
      'README.md',
      'man/extract.1',
    ])
      expect(files.has(f), f).toBe(true);
    expect([...files].some((f) => f.startsWith('test/') || f.startsWith('src/'))).toBe(false);
    // The bundle's chunks (what dist/cli/main.js imports) ship too.
    expect([...files].some((f) => /^dist\/chunks\/chunk-\w+\.js$/.test(f))).toBe(true);
  });

  it('extract --version and --help work from any directory', async () => {
    const cwd = tempDir();
    const version = await execa(process.execPath, [CLI, '--version'], { cwd, env: cleanEnv(), extendEnv: false });
    expect(version.stdout.trim()).toMatch(/^extract \d+\.\d+\.\d+ \(node v\d+\.\d+\.\d+, \w+ \w+\)$/);
    const help = await execa(process.execPath, [CLI, '--help'], { cwd, env: cleanEnv(), extendEnv: false });
    expect(help.stdout).toContain('Exit codes:');
  });
});
