import { describe, expect, it } from 'vitest';
import { resolveOutput } from '../../src/outputs/index.ts';
import { skipperFor } from '../../src/watch/folders.ts';
import { batchOptions } from '../batch/harness.ts';

describe('extract watch: hidden names', () => {
  const deps = { cwd: '/w', env: {} };
  const target = resolveOutput({ out: 'out.jsonl', cwd: '/w' });

  it('a hidden file or folder is left out by default, as a batch run walks; --hidden takes it as any other', () => {
    const plain = skipperFor(['in'], batchOptions('http://127.0.0.1:9', 'ext_k', { state: null }), target, deps);
    expect(plain('in/.hidden.pdf')).toBe(true);
    expect(plain('in/.scans/a.pdf')).toBe(true);
    expect(plain('in/a.pdf')).toBe(false);
    // Failed before: watch had no --hidden, and its skip rule left hidden names out whatever was asked.
    const hidden = skipperFor(
      ['in'],
      batchOptions('http://127.0.0.1:9', 'ext_k', { state: null, hidden: true }),
      target,
      deps,
    );
    expect(hidden('in/.hidden.pdf')).toBe(false);
    expect(hidden('in/.scans/a.pdf')).toBe(false);
    // Its own output is never a document, hidden or not.
    expect(hidden('out.jsonl')).toBe(true);
  });
});
