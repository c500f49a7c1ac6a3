import { parsePages, parseSplit } from '../pdf/selection.ts';
import { defineFlags } from './spec.ts';

/**
 * What a batch run makes of its inputs before sending them (docs/inputs.md): pages cut, PDFs
 * split and unlocked on this machine, the source's own headers for URL inputs.
 */
export const INPUT_FLAGS = defineFlags({
  pages: {
    kind: 'custom',
    value: 'pages',
    description:
      'send only these pages of each PDF, cut on this machine (1, 1-3,last, 5-): the service charges the pages sent; the part is named file.pdf#pages=1-3',
    parse: parsePages,
  },
  split: {
    kind: 'custom',
    value: 'rule',
    description:
      'make several documents of each PDF, cut on this machine: every:N (N pages each) or blank (a page with no text and no image separates them)',
    parse: parseSplit,
  },
  passwordFile: {
    kind: 'path',
    value: 'file',
    description:
      'unlock encrypted PDFs on this machine with these passwords (one a line, tried in turn) before sending; without it an encrypted PDF fails once, unsent',
  },
  header: {
    kind: 'list',
    value: 'line',
    description:
      "send 'Name: value' with each URL input to the URL's own host, never to another host a redirect leads to (repeatable); @FILE reads them from a file, one a line, as curl's -H @file, out of sight of ps",
  },
});
