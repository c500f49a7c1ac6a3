import { afterAll, describe, expect, it } from 'vitest';
import { closeOcr } from '../../src/engine/ocr.ts';
import { readImage } from '../../src/engine/scan.ts';
import { makePdf } from '../helpers/pdf.ts';
import { grayPng, renderGray } from '../helpers/scan.ts';

/**
 * Letters with diacritics on scans (issue 23: no wrong value from a scan). With English as
 * tesseract's first language, its model, which has no "ü" or "é", read these lines as "Muller",
 * "Bohm", "Jurgen", "fur", "regler", "Helene" with word confidences of 88-96: wrong values that
 * no confidence rule catches. Drawn by the test at 300 dpi, never the corpus; OCR is seconds a
 * page on a loaded machine: a generous time-out.
 */

const OCR_MS = 120_000;
afterAll(() => closeOcr());

describe('diacritics on scans', () => {
  it(
    'German and French words keep their letters',
    async () => {
      const pdf = await makePdf([
        [
          'Rechnung an:',
          'Liselotte Müller',
          'Günter Böhm',
          'Jürgen Schüler',
          'Bill to: Müller GmbH',
          '',
          'Lieferung für Müller, Grüße',
          'Facture à régler, Hélène Français',
        ],
      ]);
      const scan = await readImage('png', new Uint8Array(await grayPng(await renderGray(pdf, 300))));
      const words = (scan.pages[0]?.lines ?? []).flatMap((l) => l.cells.flatMap((c) => c.text.split(' ')));
      for (const word of ['Müller', 'Böhm', 'Jürgen', 'für', 'régler,', 'Hélène', 'Français'])
        expect(words).toContain(word);
      for (const stripped of ['Muller', 'Bohm', 'Jurgen', 'fur', 'regler,', 'Helene', 'Francais'])
        expect(words).not.toContain(stripped);
    },
    OCR_MS,
  );
});
