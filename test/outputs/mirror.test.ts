import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commonBase, jsonNameOf, mirroredPaths } from '../../src/outputs/mirror.ts';

describe('mirror', () => {
  it('mirror: the common base is the deepest folder holding every input', () => {
    expect(commonBase(['in/2024/a.pdf', 'in/2025/q1/b.pdf'], '/w')).toBe('/w/in');
    expect(commonBase(['in/2024/a.pdf'], '/w')).toBe('/w/in/2024');
    expect(commonBase(['/x/a.pdf', '/y/b.pdf'], '/w')).toBe('/');
    expect(commonBase(['../up/a.pdf', 'here/b.pdf'], '/w/sub')).toBe('/w');
    expect(commonBase([], '/w')).toBe('/w');
  });

  it('mirror: folder names that share a prefix are not a common folder', () => {
    expect(commonBase(['/data/in/a.pdf', '/data/inbox/b.pdf'], '/')).toBe('/data');
  });

  it('mirror: a name keeps its extension and gains .json', () => {
    expect(jsonNameOf('a/b/invoice.pdf')).toBe('a/b/invoice.pdf.json');
    expect(jsonNameOf('README')).toBe('README.json');
    expect(jsonNameOf('.hidden')).toBe('.hidden.json');
    expect(jsonNameOf('archive.tar.gz')).toBe('archive.tar.gz.json');
  });

  it('mirror: the tree below the common base is mirrored under the output directory', () => {
    expect(mirroredPaths(['in/2024/a.pdf', 'in/2025/a.pdf', 'in/c.png'], '/w', '/nonexistent-out')).toEqual([
      '/nonexistent-out/2024/a.pdf.json',
      '/nonexistent-out/2025/a.pdf.json',
      '/nonexistent-out/c.png.json',
    ]);
  });

  it('mirror: a name does not depend on the other files of the night (a scan.png arriving beside scan.pdf)', () => {
    const alone = mirroredPaths(['s/scan.pdf', 's/x.pdf'], '/w', '/o');
    const withSibling = mirroredPaths(['s/scan.pdf', 's/scan.png', 's/x.pdf', 's/x.pdf'], '/w', '/o');
    expect(alone).toEqual(['/o/scan.pdf.json', '/o/x.pdf.json']);
    expect(withSibling).toEqual(['/o/scan.pdf.json', '/o/scan.png.json', '/o/x.pdf.json', '/o/x.pdf.2.json']);
  });

  const made: string[] = [];
  afterEach(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('mirror: a folder an earlier version wrote keeps its names for the same inputs (no second copy at upgrade)', () => {
    const out = mkdtempSync(join(tmpdir(), 'mirror-'));
    made.push(out);
    mkdirSync(join(out, '2024'));
    writeFileSync(join(out, '2024/a.json'), JSON.stringify({ file: 'in/2024/a.pdf', results: {} }));
    // Another input's record under the old name is not this input's: the new name.
    writeFileSync(join(out, 'c.json'), JSON.stringify({ file: 'elsewhere/c.png' }));
    expect(mirroredPaths(['in/2024/a.pdf', 'in/c.png', 'in/d.pdf'], '/w', out)).toEqual([
      join(out, '2024/a.json'),
      join(out, 'c.png.json'),
      join(out, 'd.pdf.json'),
    ]);
  });
});
