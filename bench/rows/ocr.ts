import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { extractInProcess } from '../../src/engine/extract.ts';
import { closeOcr } from '../../src/engine/ocr.ts';
import { type Gray, grayPng, imagePdf, renderGray } from '../../test/helpers/scan.ts';
import { NODE, ROOT } from '../lib/paths.ts';
import { longPdf } from '../lib/pdfs.ts';
import { check, run } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';

/** A scanner's office resolution, and the one the engine renders PDF pages at; tiny mode (CI) draws fewer pixels. */
const DPI = 300;
const TINY_DPI = 150;
/**
 * Tiny mode reads only the page's first lines (the invoice number the row checks, and the date):
 * OCR's cost follows the pixels, and the PDF is rendered at the engine's own 300 dpi whatever
 * the scan's, so a whole page cost the smoke test 7 of its CPU seconds.
 */
const TINY_FRACTION = 0.08;

/**
 * Row 10: seconds a page for a scanned page read by the engine (OCR, then layout and
 * grounding), as a PNG and as a PDF that holds only the image (rendered by the engine first),
 * against tesseract.js alone on the same PNG. All warm: the recogniser's start (about 2 s
 * for three languages) is paid once per engine thread, not per page.
 */
export async function ocrRows(ctx: BenchContext): Promise<Row[]> {
  const reps = ctx.tiny ? 1 : 3;
  const dpi = ctx.tiny ? TINY_DPI : DPI;
  const page = await renderGray(await longPdf(1, 1), dpi);
  const gray = ctx.tiny ? topOf(page, TINY_FRACTION) : page;
  const png = new Uint8Array(await grayPng(gray));
  // The PDF says the image is at 300 dpi, the resolution the engine renders a page at: it OCRs the
  // image's own pixels (in --tiny, a 150 dpi image said to be at 150 dpi was OCRed at four times them).
  const pdf = new Uint8Array(await imagePdf(gray, DPI));
  const file = join(ctx.tmp, 'scan.png');
  writeFileSync(file, png);
  const read = async (bytes: Uint8Array, mimeType: string) => {
    const t = performance.now();
    const out = await extractInProcess({ bytes, mimeType, fields: INVOICE_FIELDS });
    if (out.results.invoice_number !== 'INV-001000')
      throw new Error(`row 10: the scan read ${JSON.stringify(out.results.invoice_number)}, not INV-001000`);
    return (performance.now() - t) / 1000;
  };
  const engine: Record<'png' | 'pdf', number[]> = { png: [], pdf: [] };
  try {
    ctx.log(`row 10: warming the engine's recogniser on a ${gray.width}x${gray.height} page`);
    if (!ctx.tiny) await read(png, 'image/png');
    for (let r = 0; r < reps; r++) {
      ctx.log(`row 10: engine, rep ${r + 1}/${reps}`);
      engine.png.push(await read(png, 'image/png'));
      engine.pdf.push(await read(pdf, 'application/pdf'));
    }
  } finally {
    await closeOcr();
  }
  ctx.log('row 10: bare tesseract.js');
  const bare = await run(NODE, [
    join(ROOT, 'bench/peers/tesseract-bare.ts'),
    file,
    String(reps),
    ...(ctx.tiny ? ['cold'] : []),
  ]);
  check(bare, 'bare tesseract.js');
  const bareSeconds = Number(bare.stdout.trim());
  const size = `${ctx.tiny ? 'the first lines of ' : ''}an A4 invoice page at ${dpi} dpi (${gray.width}x${gray.height} px)`;
  return [
    row(ctx, {
      id: '10 png',
      measurement: `OCR: engine seconds a page, ${size} as a grey PNG`,
      figure: median(engine.png),
      unit: 's/page',
      peer: 'tesseract.js alone (createWorker + recognize), same page, same languages',
      peerFigure: bareSeconds,
      goal: 'reported',
      note: 'the engine reads eng+deu+fra with page segmentation for blocks and columns, then lays out and grounds the words',
    }),
    row(ctx, {
      id: '10 pdf',
      measurement: `OCR: engine seconds a page, the same ${ctx.tiny ? 'image' : 'page'} as a PDF holding only the image (rendered at 300 dpi, then OCR)`,
      figure: median(engine.pdf),
      unit: 's/page',
      peer: 'tesseract.js alone on the PNG',
      peerFigure: bareSeconds,
      goal: 'reported',
    }),
  ];
}

/** The top of a page down to the first blank row at or below `fraction` of its height: whole lines of text only. */
function topOf(page: Gray, fraction: number): Gray {
  const { width, pixels } = page;
  const blank = (y: number) => pixels.subarray(y * width, (y + 1) * width).every((v) => v === 255);
  let height = Math.ceil(page.height * fraction);
  while (height < page.height && !blank(height)) height++;
  return { width, height, pixels: pixels.slice(0, width * height) };
}
