import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BOUNDS, type Bounds, Refused } from '../../src/inputs/container.ts';
import { readTar } from '../../src/inputs/tar.ts';

/**
 * The tar reader on archives made by tar(1): files are members in order, read when the expander
 * writes them (or passed over when it does not); links, devices and FIFOs are refused by name; a
 * damaged or truncated archive fails as a whole.
 */

type Seen = { name: string; bytes?: string; declared?: number; reason?: string };

async function read(file: string, options: { skip?: boolean; bounds?: Bounds } = {}): Promise<Seen[]> {
  const handle = await open(file);
  const seen: Seen[] = [];
  try {
    for await (const m of readTar(handle, (await handle.stat()).size, options.bounds ?? BOUNDS)) {
      if (m.kind === 'refused') seen.push({ name: m.name, reason: m.reason });
      else if (options.skip) seen.push({ name: m.name });
      else {
        const opened = await m.open();
        const chunks: Uint8Array[] = [];
        if (opened instanceof Uint8Array) chunks.push(opened);
        else for await (const chunk of opened) chunks.push(chunk as Uint8Array);
        seen.push({ name: m.name, bytes: Buffer.concat(chunks).toString('latin1'), declared: m.declared });
      }
    }
  } finally {
    await handle.close();
  }
  return seen;
}

function folder(): { root: string; src: string } {
  const root = mkdtempSync(join(tmpdir(), 'extract-tar-'));
  const src = join(root, 'src');
  mkdirSync(join(src, 'q'), { recursive: true });
  return { root, src };
}

describe('the tar reader', () => {
  const long = `${'d'.repeat(120)}/${'n'.repeat(110)}.pdf`;
  for (const format of ['pax', 'gnu', 'ustar'] as const)
    it(`a ${format} archive of a folder: files in order without ./, long names, links and FIFOs refused by name`, async () => {
      const { root, src } = folder();
      writeFileSync(join(src, 'a.pdf'), 'aaa');
      writeFileSync(join(src, 'q', 'b.pdf'), 'bb');
      writeFileSync(join(src, 'empty.pdf'), '');
      linkSync(join(src, 'a.pdf'), join(src, 'hard.pdf'));
      symlinkSync('a.pdf', join(src, 'link.pdf'));
      execFileSync('mkfifo', [join(src, 'pipe')]);
      const names = ['a.pdf', 'q', 'empty.pdf', 'hard.pdf', 'link.pdf', 'pipe'];
      if (format !== 'ustar') {
        mkdirSync(join(src, long.split('/')[0] ?? ''));
        writeFileSync(join(src, long), 'long');
        names.push(long);
      }
      const tar = join(root, 't.tar');
      execFileSync('tar', [`--format=${format}`, '-cf', tar, '-C', src, ...names.map((n) => `./${n}`)]);
      const expected: Seen[] = [
        { name: 'a.pdf', bytes: 'aaa', declared: 3 },
        { name: 'q/b.pdf', bytes: 'bb', declared: 2 },
        { name: 'empty.pdf', bytes: '', declared: 0 },
        { name: 'hard.pdf', reason: 'a hard link in the archive: not followed, not expanded' },
        { name: 'link.pdf', reason: 'a symbolic link in the archive: not followed, not expanded' },
        { name: 'pipe', reason: 'a FIFO in the archive: not followed, not expanded' },
      ];
      if (format !== 'ustar') expected.push({ name: long, bytes: 'long', declared: 4 });
      expect(await read(tar)).toEqual(expected);
      // Members the expander passes over (a refused name) are read past: the next ones still come.
      expect((await read(tar, { skip: true })).map((s) => s.name)).toEqual(expected.map((s) => s.name));
    });

  it('a member past the end of a truncated archive fails the archive as a whole', async () => {
    const { root, src } = folder();
    writeFileSync(join(src, 'big.pdf'), randomBytes(100_000));
    writeFileSync(join(src, 'a.pdf'), 'aaa');
    const whole = join(root, 'whole.tar');
    execFileSync('tar', ['-cf', whole, '-C', src, 'a.pdf', 'big.pdf']);
    const cut = join(root, 'cut.tar');
    writeFileSync(cut, readFileSync(whole).subarray(0, 50_000));
    const seen: Seen[] = [];
    const handle = await open(cut);
    const error = await (async () => {
      for await (const m of readTar(handle, 50_000, BOUNDS)) {
        seen.push({ name: m.name });
        if (m.kind === 'file') {
          const opened = await m.open();
          if (!(opened instanceof Uint8Array)) for await (const _ of opened);
        }
      }
    })().catch((err: unknown) => err);
    await handle.close();
    expect(error).toBeInstanceOf(Refused);
    expect((error as Error).message).toBe('a damaged tar archive (a member lies past its end)');
    expect(seen[0]?.name).toBe('a.pdf');
  });

  it('an empty archive has no members; bytes that are no tar fail it; past the member bound it fails', async () => {
    const { root, src } = folder();
    const empty = join(root, 'empty.tar');
    execFileSync('tar', ['-cf', empty, '-T', '/dev/null']);
    expect(await read(empty)).toEqual([]);
    const noise = join(root, 'noise.tar');
    writeFileSync(noise, randomBytes(4096));
    await expect(read(noise)).rejects.toThrow(/^not a tar archive, or a damaged one/);
    for (let i = 0; i < 6; i++) writeFileSync(join(src, `n${i}.txt`), `${i}`);
    const many = join(root, 'many.tar');
    execFileSync('tar', ['-cf', many, '-C', src, ...Array.from({ length: 6 }, (_, i) => `n${i}.txt`)]);
    expect(await read(many, { bounds: { ...BOUNDS, members: 6 } })).toHaveLength(6);
    await expect(read(many, { bounds: { ...BOUNDS, members: 5 } })).rejects.toThrow('holds more than 5 members');
  });
});
