import { describe, expect, it } from 'vitest';
import { mergeTable, renderTable } from '../../bench/lib/table.ts';

describe('bench table', () => {
  it("a | in a cell is escaped: every row has the header row's eight cells", () => {
    const text = renderTable([
      {
        id: '4 rerun',
        measurement: 'Rerun with all files completed',
        figure: 2.5,
        unit: 's',
        peer: 'sha256sum over the same files (find | xargs)',
        peerFigure: 1,
        ratio: 2.5,
        goal: '<= 1.5x',
        met: false,
      },
    ]);
    // Markdown splits a row on every | not escaped with a backslash.
    const cells = (line: string): number => line.split(/(?<!\\)\|/).length - 2;
    const [header, rule, row] = text.split('\n');
    expect(cells(header!)).toBe(8);
    expect(cells(rule!)).toBe(8);
    expect(cells(row!)).toBe(8);
    expect(row).toContain('(find \\| xargs)');
  });
});

describe('BENCHMARKS.md with some rows measured again (--write --only)', () => {
  const r = (id: string, figure: number, note?: string) => ({
    id,
    measurement: `row ${id}`,
    figure,
    unit: 's',
    peer: 'peer',
    peerFigure: 1,
    ratio: figure,
    goal: 'reported',
    met: null,
    ...(note === undefined ? {} : { note }),
  });
  const before = `# Benchmarks\n\nMachine: m.\n\n${renderTable([r('6', 1, 'six'), r('7 engine', 2, 'old seven'), r('9 w1', 3)])}\nSizes ...\n`;

  it('replaces the rows run and their notes, adds new ones after the last row, keeps the others', () => {
    const after = mergeTable(
      before,
      [r('7 engine', 5, 'new seven'), r('10 png', 7, 'ten')],
      'Rows 7, 10 measured again.',
    );
    const rows = after.split('\n').filter((l) => /^\| (?!#)[^|-]/.test(l));
    expect(rows.map((l) => l.split(' | ')[0])).toEqual(['| 6', '| 7 engine', '| 9 w1', '| 10 png']);
    expect(after).toContain('| 7 engine | row 7 engine | 5.00 s |');
    expect(after).not.toContain('old seven');
    expect(after).toContain('- 6: six\n- 7 engine: new seven\n- 10 png: ten');
    expect(after).toContain('Machine: m.\n\nRows 7, 10 measured again.');
    expect(after).toContain('Sizes ...');
  });
});
