import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect } from 'vitest';
import type { BatchDeps } from '../../src/batch/options.ts';
import type { DocumentRecord } from '../../src/outputs/record.ts';
import { createSkipTally } from '../../src/watch/skips.ts';
import { sendSettled } from '../../src/watch/send-settled.ts';
import { createSettler } from '../../src/watch/settle.ts';
import { batchOptions } from '../batch/harness.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * extract watch's send step in process (sendSettled): a scan sent before its writer finished
 * (its writer paused past --settle) is refused as truncated; the writer finishes while the
 * record is being written (the test's output, no race). The whole file is then not the one that
 * was read: it stays in the drop folder, never moved to failed/ unsent, and the next cycle sends it.
 */

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

function deps(cwd: string): BatchDeps {
  let t = Date.parse('2026-11-23T02:00:00.000Z');
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  return {
    now: () => t,
    sleep: async (ms) => {
      t += ms;
      await new Promise((r) => setTimeout(r, 1));
    },
    random: () => 0.5,
    log: () => {},
    cwd,
    env: {},
    stdout: quiet,
    stderr: quiet,
    isTTY: false,
    lock: { pid: process.pid, host: 'test', isAlive: () => false, now: () => t },
  };
}

describe('extract watch: a file that grew after a premature send', () => {
  it('is called truncated, stays in the drop folder (not moved to failed/), and the next cycle sends it whole', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = mkdtempSync(join(tmpdir(), 'extract-premature-'));
    dirs.push(cwd);
    for (const d of ['drop', 'done', 'failed']) mkdirSync(join(cwd, d));
    const whole = await invoicePdf(42);
    const cut = Math.floor(whole.length * 0.8);
    const path = join(cwd, 'drop', 'scan.pdf');
    writeFileSync(path, whole.subarray(0, cut));

    const lines: string[] = [];
    const written: DocumentRecord[] = [];
    let finishWriting = true;
    const ctx = {
      batch: batchOptions(server.url, KEY, { moveDone: 'done', moveFailed: 'failed', route: 'inline' as const }),
      folders: ['drop'],
      roots: [resolve(cwd, 'drop')],
      deps: deps(cwd),
      log: (_level: string, text: string) => void lines.push(text),
      appender: {
        holds: () => false,
        append: async (records: readonly DocumentRecord[]) => {
          written.push(...records);
          // The scanner finishes its file while the record of its first half is written.
          if (finishWriting) appendFileSync(path, whole.subarray(cut));
          finishWriting = false;
        },
      },
      settler: createSettler(0, () => 0),
      skips: createSkipTally(),
    };
    const stamp = () => ({ size: statSync(path).size, mtimeMs: statSync(path).mtimeMs });

    expect(await sendSettled([{ path: 'drop/scan.pdf', stamp: stamp() }], ctx)).toBeUndefined();
    expect(written).toMatchObject([{ file: 'drop/scan.pdf', status: 'error' }]);
    expect(written[0]?.error).toMatch(/truncated/);
    expect(written[0]?.error).not.toMatch(/bomb/);
    expect(readdirSync(join(cwd, 'failed'))).toEqual([]);
    expect(readFileSync(path).equals(whole)).toBe(true);
    expect(lines.join('\n')).toMatch(
      /drop\/scan\.pdf: changed after it was read \(rewritten or replaced\): left where it is/,
    );

    expect(await sendSettled([{ path: 'drop/scan.pdf', stamp: stamp() }], ctx)).toBeUndefined();
    expect(written[1]).toMatchObject({ file: 'drop/scan.pdf', status: 'completed' });
    expect(readdirSync(join(cwd, 'done'))).toEqual(['scan.pdf']);
    expect(readFileSync(join(cwd, 'done', 'scan.pdf')).equals(whole)).toBe(true);
  });
});
