/**
 * Which pages of a PDF are documents: `--pages` (a selection) and `--split` (how the selected
 * pages fall into several documents), parsed once when the run starts and resolved against
 * each file's page count. Pure: no PDF is read here (document.ts reads them).
 *
 * A part is named by its pages in one canonical form (`pages=1-3,7`), whatever the user wrote:
 * `1-3,last` on a 7-page file and `1,2,3,7` are the same part, so the same bytes of the same
 * file are one document, and another selection is another document.
 */
import { ExtractError } from '../errors.ts';

/** A page number as written: a 1-based number or the file's last page. */
type Bound = number | 'last';
/** `--pages`: ranges of pages, in the order written (`1-3,last`). */
export type PageSelection = { text: string; ranges: ReadonlyArray<{ from: Bound; to: Bound }> };
/** `--split`: every N selected pages a document, or documents separated by blank pages. */
export type SplitRule = { every: number } | { blank: true };

/** One document cut from a file: its pages (1-based, in file order) and their canonical label. */
export type PagePart = { pages: number[]; label: string };

/** Most pages a selection may name by number: beyond any real PDF, short of a typo's millions. */
const MAX_PAGE = 1_000_000;

function _bound(word: string, flag: string, whole: string): Bound {
  if (word === 'last') return 'last';
  if (/^[1-9][0-9]*$/.test(word) && Number(word) <= MAX_PAGE) return Number(word);
  throw new ExtractError(
    'usage',
    `${flag} "${whole}": "${word}" is not a page: write page numbers from 1 and ranges, such as 1, 1-3,last or 2-last`,
  );
}

/** `--pages 1`, `--pages 1-3,last`, `--pages 5-`: throws a usage error that shows the form. */
export function parsePages(text: string, flag = '--pages'): PageSelection {
  const ranges = text.split(',').map((item) => {
    const part = item.trim();
    const dash = part.indexOf('-');
    if (dash === -1) {
      const page = _bound(part, flag, text);
      return { from: page, to: page };
    }
    const from = _bound(part.slice(0, dash).trim(), flag, text);
    const rest = part.slice(dash + 1).trim();
    const to = rest === '' ? 'last' : _bound(rest, flag, text);
    if (typeof from === 'number' && typeof to === 'number' && to < from) {
      throw new ExtractError('usage', `${flag} "${text}": the range ${part} runs backwards: write ${to}-${from}`);
    }
    if (from === 'last' && to !== 'last') {
      throw new ExtractError('usage', `${flag} "${text}": the range ${part} starts at the last page: write ${to}-last`);
    }
    return { from, to };
  });
  return { text, ranges };
}

/** `--split every:N` or `--split blank`. */
export function parseSplit(text: string, flag = '--split'): SplitRule {
  if (text === 'blank') return { blank: true };
  const every = /^every:([1-9][0-9]*)$/.exec(text);
  if (every && Number(every[1]) <= MAX_PAGE) return { every: Number(every[1]) };
  throw new ExtractError(
    'usage',
    `${flag} "${text}" is not a split: write every:N (a document every N pages, such as every:2) or blank (a blank page separates documents)`,
  );
}

/**
 * The pages a selection names in a file of `pageCount` pages, 1-based, each once, in file order.
 * Pages past the end are left out (`1-3` of a 2-page file is pages 1 and 2); none left is [].
 */
export function selectedPages(selection: PageSelection | undefined, pageCount: number): number[] {
  if (selection === undefined) return Array.from({ length: pageCount }, (_, i) => i + 1);
  const chosen = new Set<number>();
  const at = (b: Bound): number => (b === 'last' ? pageCount : b);
  for (const { from, to } of selection.ranges) {
    for (let page = at(from); page <= Math.min(at(to), pageCount); page++) chosen.add(page);
  }
  return [...chosen].sort((a, b) => a - b);
}

/** The canonical label of a set of pages (1-based, in order): `pages=1-3,7`. */
export function pagesLabel(pages: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    runs.push(i === j ? String(pages[i]) : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return `pages=${runs.join(',')}`;
}

/**
 * The documents a file's selected pages make: one (the selection) without a split; with
 * `every:N`, N selected pages each (the last one shorter); with `blank`, the runs of selected
 * pages between blank ones (`isBlank`, 1-based), the blank pages themselves in none.
 */
export function pageParts(
  selected: readonly number[],
  split: SplitRule | undefined,
  isBlank: (page: number) => boolean = () => false,
): PagePart[] {
  const groups: number[][] = [];
  if (split === undefined) groups.push([...selected]);
  else if ('every' in split) {
    for (let i = 0; i < selected.length; i += split.every) groups.push(selected.slice(i, i + split.every));
  } else {
    let run: number[] = [];
    for (const page of selected) {
      if (!isBlank(page)) run.push(page);
      else if (run.length > 0) {
        groups.push(run);
        run = [];
      }
    }
    if (run.length > 0) groups.push(run);
  }
  return groups.filter((g) => g.length > 0).map((pages) => ({ pages, label: pagesLabel(pages) }));
}
