import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discoverInputs, streamInputs } from '../../src/batch/discover/stream.ts';
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

/** A path under cwd whose last name has bytes that are not UTF-8 (numbers are raw bytes). */
const bytesPath = (...parts: Array<string | number>): Buffer =>
  Buffer.concat([
    Buffer.from(`${cwd}/`),
    ...parts.map((p) => (typeof p === 'number' ? Buffer.from([p]) : Buffer.from(p))),
  ]);

describe('discovery: names that are not UTF-8', () => {
  it('finds them, names them in Latin-1, and opens them by their bytes', async () => {
    await writeFile(bytesPath('inv/Rechnung_M', 0xfc, 'ller.pdf'), 'latin-1 bytes');
    // The same name in UTF-8: another file, read the same way, kept apart.
    await writeFile(join(cwd, 'inv/Rechnung_Müller.pdf'), 'utf-8 bytes');
    await mkdir(bytesPath('inv/Soci', 0xe9, 't', 0xe9));
    await writeFile(bytesPath('inv/Soci', 0xe9, 't', 0xe9, '/f.pdf'), 'in a folder named in latin-1');
    const d = await discoverInputs(['inv'], { cwd, ignore: [] });
    // Both Rechnung files print the same: two files all the same (their keys and bytes differ).
    expect(d.files.map((f) => f.file).filter((f) => /Rechnung|Soci/.test(f))).toEqual([
      'inv/Rechnung_Müller.pdf',
      'inv/Rechnung_Müller.pdf',
      'inv/Société/f.pdf',
    ]);
    const contents = d.files.filter((f) => /Rechnung|Soci/.test(f.file)).map((f) => readFileSync(f.path, 'utf8'));
    expect(contents.sort()).toEqual(['in a folder named in latin-1', 'latin-1 bytes', 'utf-8 bytes']);
    expect(new Set(d.files.map((f) => f.realPath)).size).toBe(d.files.length);
    expect(d.unreadable).toEqual([]);
  });

  it('a pattern finds them too, though the glob engine reads names as UTF-8', async () => {
    await writeFile(bytesPath('inv/M', 0xfc, 'ller.pdf'), 'latin-1');
    await writeFile(join(cwd, 'inv/Müller.pdf'), 'utf-8');
    const d = await discoverInputs(['inv/M*.pdf'], { cwd, ignore: [] });
    expect(d.files.map((f) => f.file)).toEqual(['inv/Müller.pdf', 'inv/Müller.pdf']);
    expect(d.files.map((f) => readFileSync(f.path, 'utf8')).sort()).toEqual(['latin-1', 'utf-8']);
    expect(d.unreadable).toEqual([]);
  });

  it('a pattern reaches into a folder whose name is not UTF-8', async () => {
    await mkdir(bytesPath('inv/Gesch', 0xe4, 'ft'));
    await writeFile(bytesPath('inv/Gesch', 0xe4, 'ft/q3.pdf'), 'in a latin-1 folder');
    await writeFile(bytesPath('inv/Gesch', 0xe4, 'ft/M', 0xfc, 'ller.pdf'), 'latin-1 in latin-1');
    const d = await discoverInputs(['inv/**/*.pdf'], { cwd, ignore: [] });
    expect(d.files.map((f) => f.file).filter((f) => f.includes('Gesch'))).toEqual([
      'inv/Geschäft/Müller.pdf',
      'inv/Geschäft/q3.pdf',
    ]);
    const inside = d.files.filter((f) => f.file.includes('Gesch')).map((f) => readFileSync(f.path, 'utf8'));
    expect(inside.sort()).toEqual(['in a latin-1 folder', 'latin-1 in latin-1']);
    expect(d.unreadable).toEqual([]);
  });

  it('a UTF-8 name that holds U+FFFD itself is read as the string it is', async () => {
    await writeFile(join(cwd, 'inv/odd\uFFFD.pdf'), 'x');
    expect(await files(['inv'])).toContain('inv/odd\uFFFD.pdf');
  });

  it('a stdin list is read as bytes: a Latin-1 line opens its file', async () => {
    const latin = bytesPath('inv/M', 0xfc, 'ller.pdf');
    await writeFile(latin, 'latin-1');
    const list = Buffer.concat([latin, Buffer.from('\r\n  inv/a.pdf  \n\n')]);
    const d = await discoverInputs(['-'], { cwd, ignore: [], stdin: Readable.from([list]) });
    expect(d.files.map((f) => f.file)).toEqual([join(cwd, 'inv/Müller.pdf'), 'inv/a.pdf']);
    expect(readFileSync(d.files[0]!.path, 'utf8')).toBe('latin-1');
  });
});

describe('discovery: a walk stays in its tree', () => {
  let outside: string;
  beforeEach(async () => {
    outside = await mkdtemp(join(tmpdir(), 'discover-outside-'));
    await mkdir(join(outside, 'dir'));
    await writeFile(join(outside, 'secret.pdf'), 'secret');
    await writeFile(join(outside, 'dir/far.pdf'), 'far');
    await symlink(join(outside, 'secret.pdf'), join(cwd, 'inv/shadow.pdf'));
    await symlink(join(outside, 'dir'), join(cwd, 'inv/elsewhere'));
    await symlink(join(cwd, 'inv/2024'), join(cwd, 'inv/this-year'));
  });
  afterEach(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  it('leaves out links that lead outside the folder, and says where they lead; links inside it work', async () => {
    const d = await discoverInputs(['inv'], { cwd, ignore: [] });
    expect(d.files.map((f) => f.file)).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
    expect(d.linksNotFollowed.map((l) => [l.file, l.target, l.folder])).toEqual([
      ['inv/elsewhere', join(outside, 'dir'), 'inv'],
      ['inv/shadow.pdf', join(outside, 'secret.pdf'), 'inv'],
    ]);
    expect(d.linksNotFollowed[0]!.reason).toMatch(/leads outside inv .*--follow-links/);
  });

  it('--follow-links follows them; a link named by itself is read as given', async () => {
    const followed = await discoverInputs(['inv'], { cwd, ignore: [], followLinks: true });
    expect(followed.files.map((f) => f.file)).toEqual([
      'inv/2024/c.pdf',
      'inv/a.pdf',
      'inv/b.pdf',
      'inv/drafts/d.pdf',
      'inv/elsewhere/far.pdf',
      'inv/shadow.pdf',
    ]);
    expect(followed.linksNotFollowed).toEqual([]);
    expect(await files(['inv/shadow.pdf'])).toEqual(['inv/shadow.pdf']);
    expect(await files(['-'], [], Readable.from(['inv/shadow.pdf\n']))).toEqual(['inv/shadow.pdf']);
  });

  it("a pattern's matches stay under the folder before its first wildcard", async () => {
    const d = await discoverInputs(['inv/**/*.pdf'], { cwd, ignore: [] });
    expect(d.files.map((f) => f.file)).not.toContain('inv/shadow.pdf');
    expect(d.linksNotFollowed.map((l) => l.file)).toEqual(['inv/elsewhere/far.pdf', 'inv/shadow.pdf']);
  });

  it('a broken link and a loop are reported by name, never skipped', async () => {
    await symlink(join(cwd, 'inv/gone.pdf'), join(cwd, 'inv/broken.pdf'));
    await symlink(join(cwd, 'inv/loop-b.pdf'), join(cwd, 'inv/loop-a.pdf'));
    await symlink(join(cwd, 'inv/loop-a.pdf'), join(cwd, 'inv/loop-b.pdf'));
    const d = await discoverInputs(['inv'], { cwd, ignore: [] });
    expect(d.unreadable.map((u) => u.reason).sort()).toEqual([
      `cannot read inv/broken.pdf: a symbolic link to ${join(cwd, 'inv/gone.pdf')}, which does not exist`,
      'cannot read inv/loop-a.pdf: a loop of symbolic links',
      'cannot read inv/loop-b.pdf: a loop of symbolic links',
    ]);
  });
});

describe('discovery: a quiet night', () => {
  it('an empty folder, or one with only hidden files, is nothing to do, not an error', async () => {
    await mkdir(join(cwd, 'empty'));
    await mkdir(join(cwd, 'hidden'));
    await writeFile(join(cwd, 'hidden/.part.pdf'), 'x');
    const d = await discoverInputs(['empty/', 'hidden'], { cwd, ignore: [] });
    expect(d.files).toEqual([]);
    expect(d.nothingIn).toBe('empty/, hidden hold no files');
  });
  it('a folder holding only links out of it is nothing to do (the links are listed)', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'discover-outside-'));
    try {
      await writeFile(join(outside, 'secret.pdf'), 'secret');
      await mkdir(join(cwd, 'drop'));
      await symlink(join(outside, 'secret.pdf'), join(cwd, 'drop/shadow.pdf'));
      for (const input of ['drop', 'drop/*.pdf']) {
        const d = await discoverInputs([input], { cwd, ignore: [] });
        expect(d.files, input).toEqual([]);
        expect(
          d.linksNotFollowed.map((l) => l.file),
          input,
        ).toEqual(['drop/shadow.pdf']);
        expect(d.nothingIn, input).toBeDefined();
      }
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
  it('an empty list on stdin is nothing to do', async () => {
    const d = await discoverInputs(['-'], { cwd, ignore: [], stdin: Readable.from(['\n \n']) });
    expect(d.nothingIn).toBe('the list on standard input was empty');
  });
  it('a pattern or a path that names nothing is still a usage error, beside an empty folder too', async () => {
    await mkdir(join(cwd, 'empty'));
    for (const inputs of [['empty', '*.docx'], ['empty', 'missing.pdf'], ['missing/']]) {
      const err = await discoverInputs(inputs, { cwd, ignore: [] }).catch((e: unknown) => e);
      expect((err as ExtractError).code, inputs.join(' ')).toBe('no_input');
    }
  });
});

describe('discovery: each file once, the first time it is found', () => {
  it('a link before its target in the walk: the link is the file, the target is not found again', async () => {
    await symlink(join(cwd, 'inv/b.pdf'), join(cwd, 'inv/0-link.pdf'));
    expect(await files(['inv'])).toEqual(['inv/0-link.pdf', 'inv/2024/c.pdf', 'inv/a.pdf', 'inv/drafts/d.pdf']);
  });
  it('a target before its link: the link is not found again, in its folder or below it', async () => {
    await symlink(join(cwd, 'inv/a.pdf'), join(cwd, 'inv/z-link.pdf'));
    await symlink(join(cwd, 'inv/a.pdf'), join(cwd, 'inv/drafts/back.pdf'));
    expect(await files(['inv'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
  });
  it('a link in a subfolder to a file of its parent not walked yet: the link', async () => {
    await symlink(join(cwd, 'inv/b.pdf'), join(cwd, 'inv/2024/up.pdf'));
    expect(await files(['inv'])).toEqual(['inv/2024/c.pdf', 'inv/2024/up.pdf', 'inv/a.pdf', 'inv/drafts/d.pdf']);
  });
  it('a file named and also in a folder named, either first', async () => {
    expect(await files(['inv/a.pdf', 'inv'])).toEqual(['inv/a.pdf', 'inv/2024/c.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
    expect(await files(['inv', 'inv/a.pdf'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
  });
  it('overlapping folders, either first; a folder named twice', async () => {
    expect(await files(['inv', 'inv/2024'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
    expect(await files(['inv/2024', 'inv'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf', 'inv/drafts/d.pdf']);
    expect(await files(['inv', join(cwd, 'inv')])).toEqual([
      'inv/2024/c.pdf',
      'inv/a.pdf',
      'inv/b.pdf',
      'inv/drafts/d.pdf',
    ]);
    // A folder the first walk leaves out (an exclusion matching the folder's path in it): the second finds its files.
    expect(await files(['inv', 'inv/drafts'], ['drafts'])).toEqual([
      'inv/2024/c.pdf',
      'inv/a.pdf',
      'inv/b.pdf',
      'inv/drafts/d.pdf',
    ]);
    expect(await files(['inv', 'inv/drafts'], ['**/drafts/**'])).toEqual(['inv/2024/c.pdf', 'inv/a.pdf', 'inv/b.pdf']);
  });
  it('"./a.pdf" and "a.pdf" are one file', async () => {
    expect(await files(['./notes.txt', 'notes.txt', join(cwd, 'notes.txt')])).toEqual(['./notes.txt']);
  });
  it('--follow-links: a link out of the folder, to a file a later folder holds', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'discover-outside-'));
    try {
      await writeFile(join(outside, 'far.pdf'), 'far');
      await symlink(join(outside, 'far.pdf'), join(cwd, 'inv/far.pdf'));
      const d = await discoverInputs(['inv', outside], { cwd, ignore: [], followLinks: true });
      expect(d.files.map((f) => f.file)).toEqual([
        'inv/2024/c.pdf',
        'inv/a.pdf',
        'inv/b.pdf',
        'inv/drafts/d.pdf',
        'inv/far.pdf',
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('streamInputs', () => {
  it('walks a subfolder where its path sorts: after "a-b" and "a.pdf", before "a0"', async () => {
    await mkdir(join(cwd, 'x/a'), { recursive: true });
    for (const f of ['x/a-b.pdf', 'x/a.pdf', 'x/a/z.pdf', 'x/a0.pdf', 'x/A.pdf', 'x/é.pdf', 'x/a b.pdf'])
      await writeFile(join(cwd, f), f);
    const expected = ['x/A.pdf', 'x/a b.pdf', 'x/a-b.pdf', 'x/a.pdf', 'x/a/z.pdf', 'x/a0.pdf', 'x/é.pdf'];
    expect([...expected].sort()).toEqual(expected);
    const { chunks } = streamInputs(['x'], { cwd, ignore: [], chunk: 1 });
    const found: string[] = [];
    for await (const chunk of chunks) found.push(...chunk.map((f) => f.file));
    expect(found).toEqual(expected);
  });
  it('gives discoverInputs files in chunks, and counts them as they go', async () => {
    const { chunks, found } = streamInputs(['inv', 'notes.txt', 'missing.pdf'], { cwd, ignore: [], chunk: 2 });
    const seen: string[][] = [];
    for await (const chunk of chunks) {
      seen.push(chunk.map((f) => f.file));
      expect(found.files).toBe(seen.flat().length);
    }
    expect(seen).toEqual([['inv/2024/c.pdf', 'inv/a.pdf'], ['inv/b.pdf', 'inv/drafts/d.pdf'], ['notes.txt']]);
    expect(found.files).toBe(5);
    expect(found.unreadable.map((u) => u.file)).toEqual(['missing.pdf']);
  });
  it('throws at its end where discoverInputs throws', async () => {
    const { chunks } = streamInputs(['*.docx'], { cwd, ignore: [] });
    const err = await (async () => {
      for await (const _ of chunks);
    })().catch((e: unknown) => e);
    expect((err as ExtractError).code).toBe('no_input');
  });
});
