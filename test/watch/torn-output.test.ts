import { mkdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runWatch } from '../../src/watch/watch.ts';
import { batchOptions, ledgerTotals } from '../batch/harness.ts';
import { tempDir } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { readCsvObjects } from '../outputs/helpers.ts';
import { until, watchDeps } from './in-process.ts';
import { it } from '../helpers/fixtures.ts';

/** Watches `in/` until `done` says the output is complete, then stops it (SIGTERM): its exit code. */
async function watchUntil(cwd: string, url: string, out: string, done: (text: string) => boolean): Promise<number> {
  const w = watchDeps(cwd);
  const running = runWatch(
    ['in'],
    {
      batch: batchOptions(url, KEY, { state: join(cwd, 'journal.sqlite'), out }),
      settle: 100,
      rescan: 3_600_000,
      noEvents: true,
    },
    w.deps,
  );
  const read = (): string => {
    try {
      return readFileSync(join(cwd, out), 'utf8');
    } catch {
      return '';
    }
  };
  await until(() => done(read()), `the records in ${out}`, w.stderr);
  w.stop();
  return running;
}

describe('watch: a torn last record of its output (the rule listen keeps too)', () => {
  for (const out of ['out.jsonl', 'out.csv']) {
    it(`watch -o ${out}: a record cut short by a crash is cut off at the restart and written again from the journal, uncharged`, {
      timeout: 120_000,
    }, async ({ emulator }) => {
      const server = await emulator();
      const cwd = tempDir('extract-watch-');
      mkdirSync(join(cwd, 'in'));
      writeFileSync(join(cwd, 'in', 'a.pdf'), await invoicePdf(1));
      writeFileSync(join(cwd, 'in', 'b.pdf'), await invoicePdf(2));
      const rows = (text: string): Array<Record<string, unknown>> =>
        out.endsWith('.csv')
          ? readCsvObjects(text)
          : text
              .split('\n')
              .filter((l) => l !== '')
              .map((l) => JSON.parse(l) as Record<string, unknown>);
      const both = (text: string): boolean => text.endsWith('\n') && rows(text).length === 2;
      expect(await watchUntil(cwd, server.url, out, both)).toBe(0);
      const whole = readFileSync(join(cwd, out), 'utf8');
      const charged = (await ledgerTotals(server.url)).net;
      // A crash in the middle of the last record's write.
      truncateSync(join(cwd, out), whole.length - 30);

      expect(await watchUntil(cwd, server.url, out, both)).toBe(0);
      const after = readFileSync(join(cwd, out), 'utf8');
      expect(rows(after).map((r) => r.file)).toEqual(rows(whole).map((r) => r.file));
      // The torn bytes are gone: the file is the earlier one, its last record whole again.
      expect(after).toBe(whole);
      expect((await ledgerTotals(server.url)).net).toBe(charged);
    });
  }
});
