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

/**
 * BENCHMARKS.md with some rows measured again (`--write --only`): each fresh row and its note
 * replace the line of the same id, or are added after the last row (notes after the last note),
 * so that rows not run keep the figures of the run that measured them.
 */
export function mergeTable(existing: string, fresh: readonly Row[], stamp: string): string {
  const lines = existing.split('\n');
  const [table] = renderTable(fresh).split('\nNotes:\n');
  const rowLines = (table ?? '').trimEnd().split('\n').slice(2);
  const idOf = (line: string): string | undefined => /^\| ([^|]+?) \|/.exec(line)?.[1];
  const isRow = (line: string) => idOf(line) !== undefined && idOf(line) !== '#';
  for (const [i, r] of fresh.entries()) {
    const line = rowLines[i] ?? '';
    const at = lines.findIndex((l) => idOf(l) === r.id);
    if (at >= 0) lines[at] = line;
    else lines.splice(lines.findLastIndex(isRow) + 1, 0, line);
    if (r.note === undefined) continue;
    const note = `- ${r.id}: ${r.note}`;
    const noteAt = lines.findIndex((l) => l.startsWith(`- ${r.id}: `));
    if (noteAt >= 0) lines[noteAt] = note;
    else lines.splice(lines.findLastIndex((l) => /^- [^:]+: /.test(l)) + 1, 0, note);
  }
  const machineAt = lines.findIndex((l) => l.startsWith('Machine: '));
  if (machineAt >= 0) lines.splice(machineAt + 1, 0, '', stamp);
  return lines.join('\n');
}
