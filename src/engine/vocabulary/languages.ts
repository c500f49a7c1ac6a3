import { DE, DE_WORDS } from './de.ts';
import { EN, EN_WORDS } from './en.ts';
import { ES, ES_WORDS } from './es.ts';
import { FR, FR_WORDS } from './fr.ts';
import { IT, IT_WORDS } from './it.ts';
import { NL, NL_WORDS } from './nl.ts';
import type { LanguageWords, Vocabulary } from './types.ts';

/**
 * Every language the engine reads, each its labels and its words by role, in one file a
 * language: to add one, write `xx.ts` and list it here. The order is the order labels and
 * composed labels are made in.
 */
export const LANGUAGES: ReadonlyArray<{ code: string; labels: Vocabulary; words: LanguageWords }> = [
  { code: 'en', labels: EN, words: EN_WORDS },
  { code: 'de', labels: DE, words: DE_WORDS },
  { code: 'fr', labels: FR, words: FR_WORDS },
  { code: 'nl', labels: NL, words: NL_WORDS },
  { code: 'es', labels: ES, words: ES_WORDS },
  { code: 'it', labels: IT, words: IT_WORDS },
];
