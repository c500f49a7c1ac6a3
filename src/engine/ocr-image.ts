import type * as Canvas from '@napi-rs/canvas';
import { importEngine } from '../engine-package.ts';
import type { ImageSize } from './images.ts';

// A native binding, from the engine package (src/engine-package.ts).
const { createCanvas, loadImage } = await importEngine<typeof Canvas>('@napi-rs/canvas');

/**
 * What OCR is given of a scanned page: its grey pixels, cleaned of what misleads tesseract's
 * own threshold, as a binary PGM (tesseract reads it as it is: no PNG to encode, nothing to
 * decode twice). tesseract splits ink from paper with one threshold for the whole page (Otsu's):
 * a receipt laid on a scanner with its lid open sits between black bands, and a faint
 * dot-matrix print beside a black handwritten mark or a logo is lighter than that threshold,
 * so the page read as no words, or as the mark alone. Here the dark regions joined to the
 * image's edge become paper, and the levels of the paper and of the page's typical ink are
 * stretched to white and black, so that the threshold falls between the print and its paper.
 */

/** A pixel this much darker than the paper is ink (or a mark): lighter ones are the paper's grain and a scan's noise. */
const INK_MARGIN = 48;
/** Sweeps of the edge's dark regions at most: a region that winds back more often than this keeps its far turns. */
const MAX_SWEEPS = 16;

/**
 * An image file's page drawn `scale` times its size on white: as a PNG, what OCR reads of a page
 * too large to read as it is, or cleaned for OCR (pixelsForOcr), what it reads of a page it read
 * as (almost) nothing (scan.ts).
 */
export async function drawnImage(
  image: Uint8Array,
  size: ImageSize,
  scale: number,
  as: 'png' | 'cleaned',
): Promise<Uint8Array> {
  const decoded = await loadImage(Buffer.from(image));
  const width = Math.max(1, Math.round(size.width * scale));
  const height = Math.max(1, Math.round(size.height * scale));
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = 'white';
  context.fillRect(0, 0, width, height);
  context.drawImage(decoded, 0, 0, width, height);
  if (as === 'png') return canvas.encode('png');
  return pixelsForOcr(context.getImageData(0, 0, width, height).data, width, height);
}

/** An image file's page drawn on a canvas (its RGBA pixels), cleaned and ready for OCR. */
function pixelsForOcr(rgba: Uint8ClampedArray, width: number, height: number): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + width * height);
  out.set(header);
  const grey = out.subarray(header.length);
  // ITU-R BT.601 luma, as tesseract's own conversion.
  for (let i = 0; i < grey.length; i++)
    grey[i] = ((rgba[i * 4] ?? 0) * 77 + (rgba[i * 4 + 1] ?? 0) * 150 + (rgba[i * 4 + 2] ?? 0) * 29) >> 8;
  paintEdgesAsPaper(grey, width, height);
  stretchInkToPaper(grey);
  return out;
}

/**
 * The dark regions joined to the image's edge (a scanner's open lid around a receipt, a torn
 * edge, a shadow) become paper: flooded from the four edges over pixels darker than the page's
 * Otsu threshold. Text is never joined to the edge unless the scan cut through it.
 */
export function paintEdgesAsPaper(grey: Uint8Array, width: number, height: number): void {
  const histogram = histogramOf(grey);
  const threshold = otsu(histogram, grey.length);
  const paper = paperLevel(histogram);
  if (paper <= threshold) return;
  // 0: paper or print, 1: dark, 2: dark and joined to the edge.
  const state = new Uint8Array(grey.length);
  for (let i = 0; i < grey.length; i++) if ((grey[i] ?? 255) <= threshold) state[i] = 1;
  const last = height - 1;
  for (let x = 0; x < width; x++) {
    if (state[x] === 1) state[x] = 2;
    if (state[last * width + x] === 1) state[last * width + x] = 2;
  }
  for (let y = 0; y < height; y++) {
    if (state[y * width] === 1) state[y * width] = 2;
    if (state[y * width + width - 1] === 1) state[y * width + width - 1] = 2;
  }
  // Grown by sweeps down and up the page, each reaching the dark pixels beside those already
  // reached, until one adds nothing: a byte a pixel, where a flood's stack took four.
  for (let sweep = 0, grew = true; grew && sweep < MAX_SWEEPS; sweep++) {
    grew = false;
    for (let y = 1; y < last; y++) {
      for (let x = 1, i = y * width + 1; x < width - 1; x++, i++) {
        if (state[i] === 1 && (state[i - 1] === 2 || state[i - width] === 2)) {
          state[i] = 2;
          grew = true;
        }
      }
    }
    for (let y = last - 1; y > 0; y--) {
      for (let x = width - 2, i = y * width + x; x > 0; x--, i--) {
        if (state[i] === 1 && (state[i + 1] === 2 || state[i + width] === 2)) {
          state[i] = 2;
          grew = true;
        }
      }
    }
  }
  let painted = 0;
  for (const v of state) if (v === 2) painted++;
  // Most of the page dark and joined to its edge: light print on a dark ground, not a border.
  if (painted > grey.length / 2) return;
  for (let i = 0; i < grey.length; i++) if (state[i] === 2) grey[i] = paper;
}

/**
 * The paper's level (the commonest) to white and the typical ink's (the median of the pixels
 * clearly darker than the paper) to black: a faint print that most of the ink is becomes black,
 * and a darker mark beside it can no longer pull the threshold below it.
 */
export function stretchInkToPaper(grey: Uint8Array): void {
  const histogram = histogramOf(grey);
  const paper = paperLevel(histogram);
  let dark = 0;
  for (let v = 0; v <= paper - INK_MARGIN; v++) dark += histogram[v] ?? 0;
  if (dark === 0) return;
  let ink = 0;
  for (let v = 0, seen = 0; v <= paper - INK_MARGIN; v++) {
    seen += histogram[v] ?? 0;
    if (seen >= dark / 2) {
      ink = v;
      break;
    }
  }
  const levels = new Uint8Array(256);
  for (let v = 0; v < 256; v++) levels[v] = Math.max(0, Math.min(255, Math.round(((v - ink) * 255) / (paper - ink))));
  for (let i = 0; i < grey.length; i++) grey[i] = levels[grey[i] ?? 0] ?? 0;
}

function histogramOf(grey: Uint8Array): Float64Array {
  const histogram = new Float64Array(256);
  for (const v of grey) histogram[v] = (histogram[v] ?? 0) + 1;
  return histogram;
}

/** The commonest level, over a window of five levels (a scan's grain spreads the paper over a few). */
function paperLevel(histogram: Float64Array): number {
  let paper = 255;
  let most = -1;
  for (let v = 0; v < 256; v++) {
    let around = 0;
    for (let d = -2; d <= 2; d++) around += histogram[v + d] ?? 0;
    if (around > most || (around === most && (histogram[v] ?? 0) > (histogram[paper] ?? 0))) {
      most = around;
      paper = v;
    }
  }
  return paper;
}

/** Otsu's threshold: the level that best splits the pixels into two classes (the most variance between them). */
function otsu(histogram: Float64Array, count: number): number {
  let sum = 0;
  for (let v = 0; v < 256; v++) sum += v * (histogram[v] ?? 0);
  let below = 0;
  let belowSum = 0;
  let best = -1;
  let threshold = 127;
  for (let v = 0; v < 256; v++) {
    below += histogram[v] ?? 0;
    const above = count - below;
    if (below === 0) continue;
    if (above === 0) break;
    belowSum += v * (histogram[v] ?? 0);
    const between = below * above * (belowSum / below - (sum - belowSum) / above) ** 2;
    if (between > best) {
      best = between;
      threshold = v;
    }
  }
  return threshold;
}

/**
 * Whether a JPEG's EXIF orientation turns it: the pattern tesseract.js looks for (the orientation
 * tag, a short of count 1, in a big-endian EXIF block) and applies when it decodes the file itself.
 */
export function turnedByExif(image: Uint8Array): boolean {
  const head = Array.from(image.subarray(0, 500)).join(' ');
  const orientation = /1 18 0 3 0 0 0 1 0 (\d)/.exec(head)?.[1];
  return orientation !== undefined && orientation !== '1';
}
