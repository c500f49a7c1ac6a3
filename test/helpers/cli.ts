import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach } from 'vitest';

/** The built CLI (npm test builds dist/ first), run on the same Node as the tests. */
export const CLI = join(import.meta.dirname, '..', '..', 'bin', 'extract.js');

/** An environment with nothing of the developer's: no API key, no base URL, no colours. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), NO_COLOR: '1', ...extra };
}

export function tempDir(prefix = 'extract-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(value, null, 2));
  return file;
}

const children = new Set<ResultPromise>();
afterEach(() => {
  for (const c of children) c.kill('SIGKILL');
  children.clear();
});

export type ServeProcess = { url: string; child: ResultPromise; stdout: () => string };

/** Starts `extract serve --port 0 ...` as a child process and waits for its start-up lines (the last is "Try: ..."). */
export async function spawnServe(args: string[], timeoutMs = 20_000): Promise<ServeProcess> {
  const child = execa(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: cleanEnv(),
    extendEnv: false,
    reject: false,
    buffer: false,
  });
  children.add(child);
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`extract serve did not start within ${timeoutMs} ms:\n${out}`)), timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /Listening on (\S+)/.exec(out);
      if (m && /^Try: /m.test(out)) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`extract serve exited (${r.exitCode}) before listening:\n${out}`));
    });
  });
  return { url, child, stdout: () => out };
}
