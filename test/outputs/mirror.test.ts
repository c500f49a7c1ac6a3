import { describe, expect, it } from 'vitest';
import { commonBase, mirroredPaths, withJsonExtension } from '../../src/outputs/mirror.ts';

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

  it('mirror: the extension is replaced by .json', () => {
    expect(withJsonExtension('a/b/invoice.pdf')).toBe('a/b/invoice.json');
    expect(withJsonExtension('README')).toBe('README.json');
    expect(withJsonExtension('.hidden')).toBe('.hidden.json');
    expect(withJsonExtension('archive.tar.gz')).toBe('archive.tar.json');
  });

  it('mirror: the tree below the common base is mirrored under the output directory', () => {
    expect(mirroredPaths(['in/2024/a.pdf', 'in/2025/a.pdf', 'in/c.png'], '/w', '/out')).toEqual([
      '/out/2024/a.json',
      '/out/2025/a.json',
      '/out/c.json',
    ]);
  });

  it('mirror: inputs that differ only by extension keep it, and a path listed twice is numbered', () => {
    expect(mirroredPaths(['s/scan.pdf', 's/scan.png', 's/x.pdf', 's/x.pdf'], '/w', '/out')).toEqual([
      '/out/scan.pdf.json',
      '/out/scan.png.json',
      '/out/x.pdf.json',
      '/out/x.pdf.2.json',
    ]);
  });
});
