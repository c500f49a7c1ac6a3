import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { CLI, NODE } from './paths.ts';

export const EMULATOR_KEY = DEFAULT_CONFIG.parsers[0]?.api_keys[0] ?? 'ext_local_emulator_key_0001';

export type ChildEmulator = { url: string; pid: number; close: () => Promise<void> };

/**
 * `extract serve` in a child process (so it does not compete with the runner's event loop),
 * in memory (or in `dataDir`), simulated engine time 0, credits enough for every run, no webhook
 * receiver.
 */
export async function startEmulator(dir: string, dataDir?: string): Promise<ChildEmulator> {
  const config = join(dir, 'emulator.json');
  writeFileSync(
    config,
    JSON.stringify({ ...DEFAULT_CONFIG, credits: 100_000_000, processing: { ms_per_page: 0, concurrency: 2 } }),
  );
  const storage = dataDir === undefined ? ['--in-memory'] : ['--data-dir', dataDir];
  const child = spawn(NODE, [CLI, 'serve', '--port', '0', '--config', config, ...storage, '--no-listen', '-q'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    let errText = '';
    const timer = setTimeout(() => reject(new Error(`extract serve did not start in 30 s: ${errText}`)), 30_000);
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (errText += c));
    child.stdout?.setEncoding('utf8').on('data', (c: string) => {
      text += c;
      const m = /Listening on (\S+)/.exec(text);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ''));
      }
    });
    child.on('exit', (code) => reject(new Error(`extract serve exited ${code}: ${errText}`)));
  });
  // Keep draining its output so a full pipe never blocks it.
  child.stdout?.resume();
  child.stderr?.resume();
  return { url, pid: child.pid ?? 0, close: () => stop(child) };
}

export function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
