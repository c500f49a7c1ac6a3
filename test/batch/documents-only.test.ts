import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchOptions, invoiceDir, run } from './harness.ts';

/** Only documents are sent: directories and patterns send PDFs and images; an empty file is refused by name. */

const KEY = 'ext_any_key_for_a_dry_run';
// The 8-byte PNG signature and an IHDR chunk: enough for file-type to know it.
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');

async function mixedDir(): Promise<string> {
  const cwd = await invoiceDir(1);
  writeFileSync(join(cwd, 'in', 'notes.txt'), 'call the supplier on monday\n');
  writeFileSync(join(cwd, 'in', 'totals.csv'), 'a,b\n1,2\n');
  writeFileSync(join(cwd, 'in', 'scan.png'), PNG);
  return cwd;
}

const planned = (r: Awaited<ReturnType<typeof run>>) =>
  r.summary.documents
    .filter((d) => d.outcome === 'planned')
    .map((d) => d.file)
    .sort();

describe('only documents are sent', () => {
  it('a directory sends PDFs and images; the rest is listed as skipped, uncharged, and counted', async () => {
    const cwd = await mixedDir();
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(planned(r)).toEqual(['in/doc-00.pdf', 'in/scan.png']);
    expect(r.summary.not_documents.map((x) => x.file).sort()).toEqual(['in/notes.txt', 'in/totals.csv']);
    expect(r.stderr).toMatch(
      /skipped 2 files that are not a document the service reads \(PDF, PNG, JPEG, TIFF\), uncharged: .*notes\.txt \(text\/plain\)/,
    );
  });

  it('--all-files sends everything; a file named by itself is always sent', async () => {
    const cwd = await mixedDir();
    const all = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true, allFiles: true }));
    expect(planned(all)).toEqual(['in/doc-00.pdf', 'in/notes.txt', 'in/scan.png', 'in/totals.csv']);
    const named = await run(
      cwd,
      ['in/notes.txt', 'in/*.csv'],
      batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }),
    );
    expect(planned(named)).toEqual(['in/notes.txt']);
    expect(named.summary.not_documents.map((x) => x.file)).toEqual(['in/totals.csv']);
  });

  it('an empty file found in a folder is no document: skipped, listed, exit 0 (a drop folder does not fail every night for it)', async () => {
    const cwd = await invoiceDir(1);
    writeFileSync(join(cwd, 'in', 'empty.pdf'), '');
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(r.summary.exit_code).toBe(0);
    expect(r.summary.not_documents).toEqual([{ file: 'in/empty.pdf', type: 'inode/x-empty' }]);
    expect(r.stderr).toMatch(
      /skipped 1 file that is not a document the service reads \(PDF, PNG, JPEG, TIFF\), uncharged: in\/empty\.pdf \(inode\/x-empty\)/,
    );
  });

  it('a document by its content: a .pdf that is text, and a GIF the service cannot read, are listed, not sent', async () => {
    const cwd = await invoiceDir(1);
    writeFileSync(join(cwd, 'in', 'fake.pdf'), 'this is a text file, not a PDF\n');
    // The smallest GIF: its signature and a 1x1 screen.
    writeFileSync(
      join(cwd, 'in', 'small.gif'),
      Buffer.from('474946383961010001000000002c00000000010001000002003b', 'hex'),
    );
    writeFileSync(join(cwd, 'in', 'scan.png'), PNG);
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(planned(r)).toEqual(['in/doc-00.pdf', 'in/scan.png']);
    expect(r.summary.not_documents).toEqual([
      { file: 'in/fake.pdf', type: 'application/octet-stream' },
      { file: 'in/small.gif', type: 'image/gif' },
    ]);
    expect(r.stderr).toMatch(/skipped 2 files that are not a document the service reads \(PDF, PNG, JPEG, TIFF\)/);
  });

  it('an empty file is refused locally, by name, before any request', async () => {
    const cwd = await invoiceDir(1);
    writeFileSync(join(cwd, 'in', 'empty.pdf'), '');
    // A closed port: had anything been sent, the run would end "service unreachable" instead.
    const r = await run(cwd, ['in/empty.pdf'], batchOptions('http://127.0.0.1:9', KEY));
    expect(r.summary.exit_code).toBe(1);
    expect(r.summary.documents).toEqual([
      expect.objectContaining({ file: 'in/empty.pdf', outcome: 'unreadable', status: 'error' }),
    ]);
    expect(r.summary.documents[0]!.error).toBe(
      'in/empty.pdf is empty (0 bytes): there is nothing to extract, so it was not sent',
    );
  });
});
