import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { expect, it, onTestFinished } from 'vitest';

/**
 * What a test starts through the fixtures of test/helpers/fixtures.ts stops when it fails mid-way,
 * in a project of its own with no setup file: a small vitest project, run as the suite runs
 * (files sharing one worker, `isolate: false`), whose first file starts an emulator, `extract
 * serve` and a CLI child in a test and in its `it.beforeAll`, then throws; the next file, in the
 * same worker, finds every port closed and every process gone.
 */
const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, 'test', 'helpers', 'fixtures.ts');

const CONFIG = `import { defineConfig } from 'vitest/config';

// One worker, files in name order: the second file looks at what the first one left.
class ByName {
  async shard(files) { return files; }
  async sort(files) { return [...files].sort((a, b) => a.moduleId.localeCompare(b.moduleId)); }
}

export default defineConfig({
  test: { include: ['*.test.ts'], pool: 'forks', isolate: false, maxWorkers: 1, sequence: { sequencer: ByName } },
});
`;

const FAILS = `import { writeFileSync } from 'node:fs';
import { it } from ${JSON.stringify(FIXTURES)};

const started = { urls: [], pids: [] };
const note = () => writeFileSync('started.json', JSON.stringify(started));

it.beforeAll(async ({ fileEmulator, fileSpawn }) => {
  started.urls.push((await fileEmulator()).url);
  const serve = await fileSpawn.spawnServe(['--in-memory', '--no-listen', '-q']);
  started.urls.push(serve.url);
  started.pids.push(serve.child.pid);
  note();
});

it('starts servers and children, then fails mid-way', async ({ emulator, spawnServe, spawnCli }) => {
  started.urls.push((await emulator()).url);
  const serve = await spawnServe(['--in-memory', '--no-listen', '-q']);
  started.urls.push(serve.url);
  started.pids.push(serve.child.pid);
  const listen = spawnCli(['listen', '--port', '0', '--auth', 'none']);
  started.urls.push((await listen.waitFor(/Listening on (http:\\/\\/[^/\\s]+)/))[1]);
  started.pids.push(listen.child.pid);
  note();
  throw new Error('failed mid-way');
});
`;

const LOOKS = `import { readFileSync, writeFileSync } from 'node:fs';
import { it } from 'vitest';

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const answers = (url) => fetch(url).then(() => true, () => false);

it('finds nothing left of the first file', async () => {
  const started = JSON.parse(readFileSync('started.json', 'utf8'));
  const left = {
    answering: (await Promise.all(started.urls.map(async (u) => ((await answers(u)) ? u : null)))).filter(Boolean),
    running: started.pids.filter(alive),
  };
  writeFileSync('left.json', JSON.stringify({ started, left }));
});
`;

it('an emulator, serve and a CLI child started by a test that throws, or by its file, are stopped', async () => {
  // Inside the clone, so that the project finds vitest and the helpers' packages.
  mkdirSync(join(ROOT, 'test-output'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'test-output', 'servers-stop-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'vitest.config.mjs'), CONFIG);
  writeFileSync(join(dir, 'a-fails.test.ts'), FAILS);
  writeFileSync(join(dir, 'b-looks.test.ts'), LOOKS);

  const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const run = await execa(process.execPath, [vitest, 'run', '--config', 'vitest.config.mjs'], {
    cwd: dir,
    reject: false,
    extendEnv: false,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, NO_COLOR: '1' },
  });
  const output = `${run.stdout}\n${run.stderr}`;
  // The first file failed as it was written to, after starting everything; the second ran.
  expect(output).toMatch(/failed mid-way/);
  expect(output).toMatch(/1 failed \| 1 passed/);
  const { started, left } = JSON.parse(readFileSync(join(dir, 'left.json'), 'utf8'));
  // Two emulators and two serves (the file's and the test's), and listen.
  expect(started.urls).toHaveLength(5);
  expect(started.pids).toHaveLength(3);
  expect(left).toEqual({ answering: [], running: [] });
});
