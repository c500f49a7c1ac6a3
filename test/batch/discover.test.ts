import { mkdir, mkdtemp, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverInputs } from '../../src/batch/discover.ts';
import { ExtractError } from '../../src/errors.ts';

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'discover-'));
  await mkdir(join(cwd, 'inv/2024'), { recursive: true });
  await mkdir(join(cwd, 'inv/drafts'), { recursive: true });
  for (const f of ['inv/a.pdf', 'inv/b.pdf', 'inv/2024/c.pdf', 'inv/drafts/d.pdf', 'notes.txt'])
    await writeFile(join(cwd, f), f);
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const files = async (inputs: string[], ignore: string[] = [], stdin?: Readable) =>
  (await discoverInputs(inputs, { cwd, ignore, stdin })).files.map((f) => f.file);

describe('discovery', () => {
  it('recurses directories in a stable order', async () => {
    expect(await files(['inv'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
  });
  it("names a folder's files as path.join would, however the folder was spelled", async () => {
    for (const spelling of ['inv', './inv', 'inv/', './inv/', 'inv/2024/..', join(cwd, 'inv'), `${join(cwd, 'inv')}/`])
      expect(await files([spelling])).toEqual(
        ['2024/c.pdf', 'a.pdf', 'b.pdf', 'drafts/d.pdf'].map((f) => join(spelling, f)),
      );
    for (const spelling of ['.', './']) expect(await files([spelling], ['**/inv/**'])).toEqual(['notes.txt']);
  });
  it('globs, with ! exclusions and --ignore', async () => {
    expect(await files(['inv/**/*.pdf', '!**/drafts/**'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf']);
    expect(await files(['inv'], ['**/2024/**', '**/drafts/**'])).toEqual(['inv/a.pdf', 'inv/b.pdf']);
  });
  it('dedupes by real path (a symlink and a second spelling are one file)', async () => {
    await symlink(join(cwd, 'inv/a.pdf'), join(cwd, 'link.pdf'));
    expect(await files(['inv/a.pdf', './inv/a.pdf', 'link.pdf', 'inv/*.pdf'])).toEqual(['inv/a.pdf', 'inv/b.pdf']);
  });
  it('- reads paths from standard input', async () => {
    expect(await files(['-'], [], Readable.from(['inv/a.pdf\n', '\nnotes.txt\n']))).toEqual(['inv/a.pdf', 'notes.txt']);
  });
  it('no match: a no_input error naming the patterns', async () => {
    const err = await discoverInputs(['*.docx', 'scans/'], { cwd, ignore: [] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExtractError);
    expect((err as ExtractError).code).toBe('no_input');
    expect((err as ExtractError).message).toContain('"*.docx"');
  });
  it('reports unreadable and missing files, the rest go on', async () => {
    await chmod(join(cwd, 'inv/b.pdf'), 0o000);
    const d = await discoverInputs(['inv/a.pdf', 'inv/b.pdf', 'missing.pdf'], { cwd, ignore: [] });
    expect(d.files.map((f) => f.file)).toEqual(process.getuid?.() === 0 ? ['inv/a.pdf', 'inv/b.pdf'] : ['inv/a.pdf']);
    expect(d.unreadable.map((u) => u.file)).toContain('missing.pdf');
  });
});
