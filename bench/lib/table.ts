import type { Row } from './row.ts';
import { fmt } from './stats.ts';

/** The one table, as Markdown (it reads as well in a terminal as in BENCHMARKS.md), notes below it. */
export function renderTable(rows: readonly Row[]): string {
  const lines = [
    '| # | measurement | extract | comparison | comparison figure | ratio | goal | met |',
    '|---|---|---:|---|---:|---:|---|---|',
  ];
  for (const r of rows) {
    const met = r.met === null ? '-' : r.met ? 'yes' : '**no**';
    const cells = [
      r.id,
      r.measurement,
      `${fmt(r.figure)} ${r.unit}`,
      r.peer,
      `${fmt(r.peerFigure)} ${r.unit}`,
      `${fmt(r.ratio)}x`,
      r.goal,
      met,
    ];
    lines.push(`| ${cells.map(cell).join(' | ')} |`);
  }
  const notes = rows.filter((r) => r.note !== undefined).map((r) => `- ${r.id}: ${r.note}`);
  return `${lines.join('\n')}\n${notes.length > 0 ? `\nNotes:\n${notes.join('\n')}\n` : ''}`;
}

/** A table cell: a `|` in the text ("find | xargs") would end the cell, so it is escaped; a line break too. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}
