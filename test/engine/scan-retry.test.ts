import { afterEach, describe, expect, it, vi } from 'vitest';
import { type OcrLayout, OcrTimeout, type OcrWord } from '../../src/engine/ocr.ts';
import { type Recognise, readImage } from '../../src/engine/scan.ts';
import { type Gray, grayPng, grayTiff } from '../helpers/scan.ts';

/**
 * The rule for reading an image file's page again, cleaned (scan.ts readImage): OCR is a stand-in
 * that answers with lines of words, so the rule is seen apart from what tesseract reads (that is
 * test/engine/scans.test.ts's). The images are real, and the cleaned one is really drawn.
 */

const WHITE: Gray = { width: 60, height: 40, pixels: new Uint8Array(60 * 40).fill(255) };

/** `count` lines of one word each, a line's height apart. */
const lines = (count: number, word = 'LINE'): OcrWord[] =>
  Array.from({ length: count }, (_, i) => ({
    text: `${word}${i + 1}`,
    x0: 5,
    x1: 40,
    top: 20 * i,
    bottom: 20 * i + 12,
    baseline: 20 * i + 12,
    height: 12,
    confidence: 95,
  }));

type Call = { cleaned: boolean; layout: OcrLayout };

/** A stand-in OCR answering each call in turn; it records whether it was given the cleaned PGM. */
function ocrAnswering(...answers: Array<() => OcrWord[]>): { ocr: Recognise; calls: Call[] } {
  const calls: Call[] = [];
  const ocr: Recognise = async (image, _ms, layout = 'auto') => {
    calls.push({ cleaned: image[0] === 0x50 && image[1] === 0x35, layout });
    const answer = answers[calls.length - 1];
    if (answer === undefined) throw new Error(`OCR called ${calls.length} times, more than the test expects`);
    return answer();
  };
  return { ocr, calls };
}

const textOf = (scan: Awaited<ReturnType<typeof readImage>>): string[] =>
  scan.pages.flatMap((p) => p.lines.map((l) => l.cells.map((c) => c.text).join(' ')));

/** A JPEG's header alone, its EXIF orientation 6 (turned a quarter): enough for its size and its turn. */
function turnedJpeg(): Uint8Array {
  const exif = [0x45, 0x78, 0x69, 0x66, 0, 0, 0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 1, 1, 18, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0];
  const app1 = [0xff, 0xe1, 0, exif.length + 6, ...exif, 0, 0, 0, 0];
  const sof = [0xff, 0xc0, 0, 17, 8, 0, 40, 0, 60, 3, ...new Array(9).fill(0)];
  return Uint8Array.from([0xff, 0xd8, ...app1, ...sof, 0xff, 0xd9, ...new Array(16).fill(0)]);
}

afterEach(() => {
  vi.useRealTimers();
});

describe('an image page read as fewer than 3 lines is read again, cleaned', () => {
  it('a page read as 3 lines or more is not read again', async () => {
    const { ocr, calls } = ocrAnswering(() => lines(3));
    const scan = await readImage('png', await grayPng(WHITE), 'auto', ocr);
    expect(calls).toEqual([{ cleaned: false, layout: 'auto' }]);
    expect(textOf(scan)).toEqual(['LINE1', 'LINE2', 'LINE3']);
  });

  it('the reading with more lines is kept, the cleaned one or the first', async () => {
    const better = ocrAnswering(
      () => lines(1, 'FIRST'),
      () => lines(4, 'CLEAN'),
    );
    const scan = await readImage('png', await grayPng(WHITE), 'block', better.ocr);
    expect(better.calls).toEqual([
      { cleaned: false, layout: 'block' },
      { cleaned: true, layout: 'block' },
    ]);
    expect(textOf(scan)).toEqual(['CLEAN1', 'CLEAN2', 'CLEAN3', 'CLEAN4']);

    const worse = ocrAnswering(
      () => lines(2, 'FIRST'),
      () => lines(1, 'CLEAN'),
    );
    expect(textOf(await readImage('png', await grayPng(WHITE), 'auto', worse.ocr))).toEqual(['FIRST1', 'FIRST2']);
    expect(worse.calls).toHaveLength(2);
  });

  it('a JPEG turned by its EXIF orientation is not read again (tesseract turns it, the drawing would not)', async () => {
    const { ocr, calls } = ocrAnswering(() => lines(1));
    const scan = await readImage('jpeg', turnedJpeg(), 'auto', ocr);
    expect(calls).toEqual([{ cleaned: false, layout: 'auto' }]);
    expect(textOf(scan)).toEqual(['LINE1']);
  });

  it('a retry that fails keeps the first reading: the document does not fail', async () => {
    const { ocr, calls } = ocrAnswering(
      () => lines(1, 'FIRST'),
      () => {
        throw new Error('tesseract cannot read the image');
      },
    );
    const scan = await readImage('png', await grayPng(WHITE), 'auto', ocr);
    expect(calls).toHaveLength(2);
    expect(textOf(scan)).toEqual(['FIRST1']);
    expect(scan.notes).toEqual([]);
  });

  it("a retry's time-out keeps the first reading, and the retry had the budget's time left", async () => {
    const limits: number[] = [];
    const { ocr, calls } = ocrAnswering(
      () => lines(1, 'FIRST'),
      () => {
        throw new OcrTimeout('OCR took too long');
      },
    );
    const timed: Recognise = (image, ms, layout) => {
      limits.push(ms);
      return ocr(image, ms, layout);
    };
    const scan = await readImage('png', await grayPng(WHITE), 'auto', timed);
    expect(calls).toHaveLength(2);
    expect(limits[1]).toBeGreaterThan(0);
    expect(limits[1]).toBeLessThanOrEqual(limits[0] ?? 0);
    expect(textOf(scan)).toEqual(['FIRST1']);
    expect(scan.notes).toEqual([]);
  });

  it("a TIFF's pages are not read again (the drawing cannot decode a TIFF), and every page is read", async () => {
    const { ocr, calls } = ocrAnswering(
      () => [],
      () => lines(3, 'NEXT'),
    );
    const scan = await readImage('tiff', grayTiff([WHITE, WHITE]), 'auto', ocr);
    expect(calls.map((c) => c.cleaned)).toEqual([false, false]);
    expect(scan.pages.map((p) => p.number)).toEqual([1, 2]);
    expect(textOf(scan)).toEqual(['NEXT1', 'NEXT2', 'NEXT3']);
    expect(scan.notes).toEqual(['page 1 has no text layer, and OCR found no words on it']);
  });

  it("no retry when less than a page's time of the budget is left", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { ocr, calls } = ocrAnswering(() => {
      // The first reading took all but 5 s of the document's 120 s.
      vi.setSystemTime(Date.now() + 115_000);
      return lines(1);
    });
    const scan = await readImage('png', await grayPng(WHITE), 'auto', ocr);
    expect(calls).toHaveLength(1);
    expect(textOf(scan)).toEqual(['LINE1']);
  });
});
