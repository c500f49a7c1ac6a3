import type { Log } from '../client/deps.ts';
import { inert } from '../inert.ts';

/**
 * The files a pass of the watcher left out as not documents, said as one line per pass: a drop
 * folder of 100,000 stray files is a count and a few names, not 100,000 lines. Only the count
 * and the first names are held, whatever the number of files. A pass that skips what the last
 * one skipped (the same count, the same first names: each rescan finds them again) says it at
 * debug level.
 */
export type SkipTally = {
  add(file: string, type: string): void;
  /** Says the pass's line (if it skipped anything) and starts the next pass. */
  flush(log: Log): void;
};

/** Names the line shows; names are cut, so a line stays short whatever they hold. */
const FIRST = 3;
const NAME_MAX = 120;

export function createSkipTally(): SkipTally {
  let count = 0;
  let first: string[] = [];
  let last = '';
  return {
    add(file, type) {
      count++;
      if (first.length < FIRST) first.push(`${inert(file, NAME_MAX)} (${inert(type, NAME_MAX)})`);
    },
    flush(log) {
      if (count === 0) return;
      const more = count > first.length ? ', …' : '';
      const text = `skipped ${count.toLocaleString('en-US')} file${count === 1 ? '' : 's'} that ${count === 1 ? 'is' : 'are'} not a document the service reads, uncharged (first: ${first.join(', ')}${more}); --all-files sends them`;
      log(text === last ? 'debug' : 'info', text);
      last = text;
      count = 0;
      first = [];
    },
  };
}
