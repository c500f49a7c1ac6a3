import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runWatch } from '../../src/watch/watch.ts';
import { batchOptions } from '../batch/harness.ts';
import { tempDir } from '../helpers/cli.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { lines, until, watchDeps } from './in-process.ts';
import { it } from '../helpers/fixtures.ts';

describe('watch: a drop folder full of files that are not documents', () => {
  it('watch over 3,000 empty files, 40 text files and one PDF: skips are a count in a line per pass, the PDF is sent, SIGTERM ends it with 0', {
    timeout: 120_000,
  }, async ({ emulator }) => {
    const server = await emulator();
    const cwd = tempDir('extract-watch-');
    const drop = join(cwd, 'in');
    mkdirSync(drop);
    for (let i = 0; i < 3000; i++) writeFileSync(join(drop, `empty-${i}.txt`), '');
    // Not empty: the batch reads these to find they are no document. One name carries a line break.
    for (let i = 0; i < 40; i++) writeFileSync(join(drop, `note-${i}.txt`), `a note ${i}\n`);
    writeFileSync(join(drop, 'evil\n::error::x.txt'), 'forged');
    writeFileSync(join(drop, 'a.pdf'), await invoicePdf(1));
    const w = watchDeps(cwd);
    const running = runWatch(
      ['in'],
      {
        batch: batchOptions(server.url, KEY, { state: undefined, out: 'out.jsonl' }),
        settle: 200,
        rescan: 3_600_000,
        noEvents: false,
      },
      w.deps,
    );
    await until(() => lines(join(cwd, 'out.jsonl')).length === 1, 'the PDF', w.stderr);
    w.stop();
    expect(await running).toBe(0);
    expect(lines(join(cwd, 'out.jsonl'))).toEqual([expect.objectContaining({ file: 'in/a.pdf', status: 'completed' })]);
    const said = w.stderr().split('\n');
    // Neither a line per file nor a line per pass beyond a few: the count says it.
    expect(said.length).toBeLessThan(15);
    const skipped = said.filter((l) => l.includes('not a document the service reads'));
    expect(skipped.length).toBeGreaterThanOrEqual(1);
    expect(skipped.length).toBeLessThanOrEqual(3);
    const total = skipped
      .map((l) => Number(/skipped ([\d,]+) files?/.exec(l)?.[1]?.replaceAll(',', '')))
      .reduce((a, b) => a + b, 0);
    expect(total).toBe(3041);
    expect(w.stderr()).not.toMatch(/^::/m);
  });
});
