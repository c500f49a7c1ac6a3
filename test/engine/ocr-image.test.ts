import { describe, expect, it } from 'vitest';
import { paintEdgesAsPaper, stretchInkToPaper, turnedByExif } from '../../src/engine/ocr-image.ts';

/** The page cleaned for OCR (ocr-image.ts), on grey pixels drawn here; OCR itself is test/engine/scans.test.ts's. */

const PAPER = 230;

/** A `width`×`height` page of paper with `ink` drawn where `at(x, y)` says. */
function page(width: number, height: number, at: (x: number, y: number) => number | null): Uint8Array {
  const grey = new Uint8Array(width * height).fill(PAPER);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const v = at(x, y);
      if (v !== null) grey[y * width + x] = v;
    }
  return grey;
}

describe('dark regions joined to the edge', () => {
  it("become paper (a scanner's lid above and below), and the print between them stays", () => {
    const grey = page(40, 40, (x, y) => (y < 5 || y >= 35 ? 5 : y === 20 && x > 10 && x < 30 ? 20 : null));
    paintEdgesAsPaper(grey, 40, 40);
    expect(grey[0]).toBe(PAPER);
    expect(grey[39 * 40 + 39]).toBe(PAPER);
    expect(grey[20 * 40 + 20]).toBe(20);
  });

  it('a page mostly dark from its edges (light print on a dark ground) is left as it is', () => {
    const grey = page(40, 40, (x, y) => (y === 20 && x > 10 && x < 30 ? null : 5));
    paintEdgesAsPaper(grey, 40, 40);
    expect(grey[0]).toBe(5);
    expect(grey[20 * 40 + 20]).toBe(PAPER);
  });
});

describe('ink and paper stretched', () => {
  it('a faint print becomes black and its paper white, however dark a small mark beside it', () => {
    // Rows 10..19 faint print (170), a short black mark (10), one pixel halfway between print and
    // paper (200), paper elsewhere.
    const grey = page(40, 40, (x, y) =>
      y >= 10 && y < 20 && x % 2 === 0 ? 170 : y === 30 && x < 8 ? 10 : y === 35 && x === 0 ? 200 : null,
    );
    stretchInkToPaper(grey);
    expect(grey[10 * 40]).toBe(0);
    expect(grey[0]).toBe(255);
    // The print's level is the ink's, not the mark's: halfway between print and paper is mid-grey
    // (it would be near paper, 220, had the mark's level been taken for the ink's).
    expect(grey[35 * 40]).toBe(128);
  });

  it('a page with no ink is left as it is', () => {
    const grey = page(10, 10, () => null);
    stretchInkToPaper(grey);
    expect([...new Set(grey)]).toEqual([PAPER]);
  });
});

describe('EXIF orientation', () => {
  const jpeg = (orientation: number) =>
    Uint8Array.of(0xff, 0xd8, 0xff, 0xe1, 0, 0, 0x4d, 0x4d, 0, 42, 1, 18, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0);
  it('a JPEG turned by its EXIF orientation is told; one upright, or without it, is not', () => {
    expect(turnedByExif(jpeg(6))).toBe(true);
    expect(turnedByExif(jpeg(1))).toBe(false);
    expect(turnedByExif(Uint8Array.of(0xff, 0xd8, 0xff, 0xd9))).toBe(false);
  });
});
