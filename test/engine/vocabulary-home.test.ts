import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CARRY_WORDS } from '../../src/engine/table-rows.ts';
import { parseBoolean } from '../../src/engine/values.ts';
import { LANGUAGES } from '../../src/engine/vocabulary/languages.ts';
import { NOT_TOTAL, SALUTATIONS, wordsOf } from '../../src/engine/vocabulary/role-words.ts';

const ENGINE = join(import.meta.dirname, '../../src/engine');

/**
 * Files of the engine outside vocabulary/ that still write words of a language: month names
 * (dates.ts), company legal forms (window.ts), and a till's words (receipts.ts, letterhead.ts).
 */
const STILL_WRITING_WORDS = new Set(['dates.ts', 'window.ts', 'receipts.ts', 'letterhead.ts']);

/** A list of five words or more: in a regular expression's alternatives, or in a Set's literal. */
const WORD_ALTERNATIVES = /\(\?:(?:[a-zà-ÿ]{3,}\|){4,}/u;
const WORD_SET = /new Set\(\[\s*(?:'[a-zà-ÿ]+',\s*){5,}/u;

describe('engine vocabulary: one home for the words of a language', () => {
  it('engine: no rule outside vocabulary/ writes a list of words of a language', () => {
    const writing = readdirSync(ENGINE)
      .filter((f) => f.endsWith('.ts') && !STILL_WRITING_WORDS.has(f))
      .filter((f) => {
        const text = readFileSync(join(ENGINE, f), 'utf8');
        return WORD_ALTERNATIVES.test(text) || WORD_SET.test(text);
      });
    expect(writing).toEqual([]);
  });

  it('engine: every language is listed once, with its labels and its words', () => {
    expect(LANGUAGES.map((l) => l.code)).toEqual(['en', 'de', 'fr', 'nl', 'es', 'it']);
    for (const l of LANGUAGES) expect(l.words.compose.heads.length).toBeGreaterThan(0);
  });

  it("engine: the rules read each language's words from its own file", () => {
    // A word of each of several languages, read by rules in other modules.
    expect(parseBoolean('oui')).toBe(true);
    expect(parseBoolean('nein')).toBe(false);
    expect(SALUTATIONS.has('herrn') && SALUTATIONS.has('mme') && SALUTATIONS.has('dhr')).toBe(true);
    expect(NOT_TOTAL.has('zuschlage') && NOT_TOTAL.has('acompte') && NOT_TOTAL.has('delle')).toBe(true);
    expect(CARRY_WORDS.test('Übertrag') && CARRY_WORDS.test('à reporter')).toBe(true);
    expect(wordsOf('payingPatterns')).toEqual(expect.arrayContaining(['zahlbar', 'payable', 'paiement', 'pagare']));
  });
});
