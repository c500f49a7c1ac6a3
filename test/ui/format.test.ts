import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/ui/format.ts';

describe('ui: durations as people read them', () => {
  it('milliseconds under a second, tenths under ten seconds, whole seconds, then minutes and seconds', () => {
    expect([850, 4249, 12_400, 185_000, 3_600_000].map(formatDuration)).toEqual([
      '850 ms',
      '4.2 s',
      '12 s',
      '3 min 5 s',
      '60 min 0 s',
    ]);
  });
});
