import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { routeChooser, UPLOAD_ONLY_ABOVE } from '../../src/batch/route.ts';
import { DEFAULT_INLINE_MAX, ROUTES } from '../../src/flags/batch.ts';

/**
 * Route choice, every case: over 300 MB a file is uploaded whatever the flags say (the spec's
 * limit); otherwise --route inline or upload is obeyed, and auto sends inline what is at most
 * --inline-max. (test/batch/units.test.ts holds the examples a reader starts from.)
 */

const size = fc.oneof(
  fc.integer({ min: 0, max: 2 * UPLOAD_ONLY_ABOVE }),
  fc.constantFrom(0, DEFAULT_INLINE_MAX, DEFAULT_INLINE_MAX + 1, UPLOAD_ONLY_ABOVE, UPLOAD_ONLY_ABOVE + 1),
);

describe('route choice', () => {
  it('any flag, any --inline-max, any size: the rule, and a reason that names what decided it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ROUTES),
        fc.integer({ min: 0, max: 2 * UPLOAD_ONLY_ABOVE }),
        size,
        (flag, max, n) => {
          const { route, why } = routeChooser(flag, max)(n);
          if (n > UPLOAD_ONLY_ABOVE) {
            expect(route).toBe('upload');
            expect(why).toMatch(/over 300 MB/);
          } else if (flag !== 'auto') {
            expect(route).toBe(flag);
            expect(why).toBe(`--route ${flag}`);
          } else {
            expect(route).toBe(n <= max ? 'inline' : 'upload');
            expect(why).toContain(`--inline-max (${max} bytes)`);
          }
        },
      ),
    );
  });

  it('auto: exactly --inline-max goes inline; one byte more is uploaded', () => {
    for (const max of [0, 1, DEFAULT_INLINE_MAX]) {
      expect(routeChooser('auto', max)(max).route).toBe('inline');
      expect(routeChooser('auto', max)(max + 1).route).toBe('upload');
    }
  });

  it('exactly 300 MB may still go inline; one byte more may not', () => {
    const choose = routeChooser('inline', Number.MAX_SAFE_INTEGER);
    expect(choose(UPLOAD_ONLY_ABOVE).route).toBe('inline');
    expect(choose(UPLOAD_ONLY_ABOVE + 1).route).toBe('upload');
  });

  it('a chooser hands out a few shared decisions, not one object per file', () => {
    const choose = routeChooser('auto', 1000);
    expect(choose(1)).toBe(choose(999));
    expect(choose(1001)).toBe(choose(2000));
    expect(choose(UPLOAD_ONLY_ABOVE + 1)).toBe(choose(UPLOAD_ONLY_ABOVE + 2));
    expect(choose(1)).not.toBe(choose(1001));
  });
});
