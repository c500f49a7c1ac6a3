import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { LabelIndex, normaliseWord } from '../../src/engine/labels.ts';

/**
 * The engine's work beyond pdfjs-dist's text, made cheaper without changing an answer
 * (issue 23, bench row "7 core"): what is built per definition is built once, what grounding
 * asks of every cell is asked once per document, and each shortcut answers exactly as the
 * plain computation it replaces. The corpus and fixtures tests hold the answers themselves.
 */

describe('engine speed: same answers, less work', () => {
  it('engine: the labels of a definition are built once and shared by every document read with it', () => {
    const a = new LabelIndex(INVOICE_FIELDS);
    // A copy, as a worker receives the definition anew with every job.
    const b = new LabelIndex(structuredClone(INVOICE_FIELDS));
    expect(b.conceptOf).toBe(a.conceptOf);
    // Each document still has answers of its own, and a changed definition its own labels.
    expect(b.match('Total: 5')).toEqual(a.match('Total: 5'));
    const changed: FieldDefinition = [...structuredClone(INVOICE_FIELDS), { name: 'kundennummer', type: 'string' }];
    const c = new LabelIndex(changed);
    expect(c.conceptOf).not.toBe(a.conceptOf);
    expect(c.match('Kundennummer: 7')?.owners.has('kundennummer')).toBe(true);
    expect(a.match('Kundennummer: 7')?.owners.has('kundennummer') ?? false).toBe(false);
  });

  it('engine: a word is normalised as Unicode NFKD without marks, lower case, ASCII or not', () => {
    const reference = (w: string) => w.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    const words = fc.oneof(
      fc.string({ unit: 'grapheme-ascii' }),
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('Rechnungsnummer', 'FÄLLIG', 'Échéance', 'Nº', 'ﬁnal', 'Ⅻ', 'İstanbul', 'ß', 'ǅ'),
    );
    fc.assert(
      fc.property(words, (w) => normaliseWord(w) === reference(w)),
      { numRuns: 2000 },
    );
  });
});
