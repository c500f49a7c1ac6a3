import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { batchOptions, invoiceDir, run } from './harness.ts';

/** Every file under a folder is accounted for: hidden ones are skipped by name, or sent with --hidden. */

const KEY = 'ext_any_key_for_a_dry_run';

async function withHidden(): Promise<string> {
  const cwd = await invoiceDir(1);
  // A valid invoice whose name starts with a dot, the folder's metadata, and a hidden folder.
  copyFileSync(join(cwd, 'in', 'doc-00.pdf'), join(cwd, 'in', '.hidden.pdf'));
  writeFileSync(join(cwd, 'in', '.DS_Store'), Buffer.from('0000000142756431', 'hex'));
  mkdirSync(join(cwd, 'in', '.git'));
  writeFileSync(join(cwd, 'in', '.git', 'HEAD'), 'ref: refs/heads/main\n');
  return cwd;
}

const planned = (r: Awaited<ReturnType<typeof run>>) =>
  r.summary.documents
    .filter((d) => d.outcome === 'planned')
    .map((d) => d.file)
    .sort();

describe('hidden files', () => {
  it('a folder walk skips hidden files and folders by name: listed in the report, counted, said once', async () => {
    const cwd = await withHidden();
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(planned(r)).toEqual(['in/doc-00.pdf']);
    expect(r.summary.hidden).toEqual(['in/.DS_Store', 'in/.git/', 'in/.hidden.pdf']);
    expect(r.summary.exit_code).toBe(0);
    expect(r.stderr).toMatch(
      /skipped 3 hidden files or folders: in\/\.DS_Store, in\/\.git\/, in\/\.hidden\.pdf.*--hidden/,
    );
  });

  it('--hidden walks them as any other: the hidden invoice is sent, the rest is no document', async () => {
    const cwd = await withHidden();
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true, hidden: true }));
    expect(planned(r)).toEqual(['in/.hidden.pdf', 'in/doc-00.pdf']);
    expect(r.summary.hidden).toEqual([]);
    expect(r.summary.not_documents.map((x) => x.file).sort()).toEqual(['in/.DS_Store', 'in/.git/HEAD']);
  });

  it('--hidden lets a pattern match hidden names too', async () => {
    const cwd = await withHidden();
    const r = await run(cwd, ['in/*.pdf'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true, hidden: true }));
    expect(planned(r)).toEqual(['in/.hidden.pdf', 'in/doc-00.pdf']);
  });
});
