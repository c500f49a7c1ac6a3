import type { Line } from './layout.ts';
import type { Place } from './types.ts';

/**
 * Places of what a receipt's rules read (receipts.ts, receipt-dates.ts), drawn tight around the
 * value's own characters: a scan's doubt is checked on the words a place holds, so a place that
 * reached into the label beside the value or the line above would lose a value to their doubt.
 */

/** The place of characters `from`..`to` of a cell, by their share of its width. */
export function placeOfPart(
  line: Line,
  cell: { text: string; x0: number; x1: number },
  from: number,
  to: number,
): Place {
  const per = (cell.x1 - cell.x0) / Math.max(1, cell.text.length);
  return placeOfCell(line, { x0: cell.x0 + per * (from + 0.5), x1: cell.x0 + per * (to - 0.5) });
}

/**
 * A cell's place, from its capitals' height above the baseline: OCR's line height holds the
 * line's spacing too, and a box that tall reaches into the small marks of the line above.
 */
export function placeOfCell(line: Line, cell: { x0: number; x1: number }): Place {
  return { page: line.page, box: [cell.x0, line.y - 0.7 * line.height, cell.x1, line.y + 0.25 * line.height] };
}
