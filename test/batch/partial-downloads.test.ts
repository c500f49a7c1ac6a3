import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchOptions, invoiceDir, run } from './harness.ts';

/** A download still arriving (a browser's or a copier's partial name) waits for the next run, named. */

const KEY = 'ext_any_key_for_a_dry_run';
const PARTIAL = ['download.pdf.part', 'scan.pdf.crdownload', 'copy.pdf.tmp', 'mail.pdf.partial', 'edit.pdf~'];

describe('partial downloads', () => {
  it('a file with a partial-download name found in a folder is not sent: listed as still arriving, exit 0', async () => {
    const cwd = await invoiceDir(1);
    // Whole PDFs under those names: the name, not the content, says the writer is not done.
    for (const name of PARTIAL) copyFileSync(join(cwd, 'in', 'doc-00.pdf'), join(cwd, 'in', name));
    writeFileSync(join(cwd, 'in', 'notes.part.pdf.txt'), 'not partial: a text file\n');
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(r.summary.documents.filter((d) => d.outcome === 'planned').map((d) => d.file)).toEqual(['in/doc-00.pdf']);
    expect(r.summary.still_changing.map((u) => [u.file, u.reason]).sort()).toEqual(
      PARTIAL.map((name) => [`in/${name}`, 'partial download']).sort(),
    );
    expect(r.summary.exit_code).toBe(0);
    expect(r.stderr).toMatch(/left 5 partial downloads \(still arriving\) for the next run: in\/copy\.pdf\.tmp/);
  });

  it('a partial download named by itself is sent, as any file named by itself', async () => {
    const cwd = await invoiceDir(1);
    copyFileSync(join(cwd, 'in', 'doc-00.pdf'), join(cwd, 'in', 'download.pdf.part'));
    const r = await run(cwd, ['in/download.pdf.part'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(r.summary.documents.map((d) => [d.file, d.outcome])).toEqual([['in/download.pdf.part', 'planned']]);
    expect(r.summary.still_changing).toEqual([]);
  });
});
