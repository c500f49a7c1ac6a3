import { describe, expect, it } from 'vitest';
import { renderTable } from '../../bench/lib/table.ts';

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
