import { describe, expect, it } from 'vitest';
import { createSettler } from '../../src/watch/settle.ts';

/** The settle rule on an injected clock: no sleeping, every millisecond chosen by the test. */
function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('watch: the settle rule', () => {
  it('a file written in chunks over 3 s settles only 3 s after its last chunk', () => {
    const c = clock();
    const s = createSettler(3000, c.now);
    // A chunk every 500 ms: each look sees a new size and mtime.
    for (let i = 1; i <= 6; i++) {
      s.seen('in/a.pdf', { size: i * 1000, mtimeMs: c.now() });
      expect(s.settled()).toEqual([]);
      c.advance(500);
    }
    const done = { size: 6000, mtimeMs: c.now() - 500 };
    // Looks once a second after the last chunk: not before 3 s of quiet.
    for (let quiet = 500; quiet < 3000; quiet += 1000) {
      s.seen('in/a.pdf', done);
      expect(s.settled()).toEqual([]);
      c.advance(1000);
    }
    s.seen('in/a.pdf', done);
    expect(s.settled()).toEqual([{ path: 'in/a.pdf', stamp: done }]);
    expect(s.waiting()).toEqual([]);
  });

  it('one look proves nothing: a file seen once is not settled however old its mtime', () => {
    const c = clock();
    const s = createSettler(3000, c.now);
    s.seen('in/old.pdf', { size: 10, mtimeMs: 0 });
    expect(s.settled()).toEqual([]);
    c.advance(2999);
    s.seen('in/old.pdf', { size: 10, mtimeMs: 0 });
    expect(s.settled()).toEqual([]);
    c.advance(1);
    s.seen('in/old.pdf', { size: 10, mtimeMs: 0 });
    expect(s.settled().map((x) => x.path)).toEqual(['in/old.pdf']);
  });

  it('a change of mtime alone (same size: a rewrite in place) starts the quiet time again', () => {
    const c = clock();
    const s = createSettler(1000, c.now);
    s.seen('a.pdf', { size: 10, mtimeMs: 1 });
    c.advance(900);
    s.seen('a.pdf', { size: 10, mtimeMs: 2 });
    c.advance(900);
    s.seen('a.pdf', { size: 10, mtimeMs: 2 });
    expect(s.settled()).toEqual([]);
    c.advance(100);
    s.seen('a.pdf', { size: 10, mtimeMs: 2 });
    expect(s.settled()).toHaveLength(1);
  });

  it('a handled file seen again with the same stamp (a touch event, a rescan) is not sent again; a changed one is', () => {
    const c = clock();
    const s = createSettler(1000, c.now);
    const stamp = { size: 10, mtimeMs: 5 };
    s.handled('a.pdf', stamp);
    s.seen('a.pdf', stamp);
    c.advance(5000);
    s.seen('a.pdf', stamp);
    expect(s.waiting()).toEqual([]);
    expect(s.settled()).toEqual([]);
    s.seen('a.pdf', { size: 11, mtimeMs: 6 });
    c.advance(1000);
    s.seen('a.pdf', { size: 11, mtimeMs: 6 });
    expect(s.settled().map((x) => x.path)).toEqual(['a.pdf']);
  });

  it('a forgotten file (still processing, not sent) is taken again at its next look', () => {
    const c = clock();
    const s = createSettler(1000, c.now);
    const stamp = { size: 10, mtimeMs: 5 };
    s.handled('a.pdf', stamp);
    s.forget('a.pdf');
    s.seen('a.pdf', stamp);
    c.advance(1000);
    s.seen('a.pdf', stamp);
    expect(s.settled()).toHaveLength(1);
  });

  it('a file that goes away stops waiting, and settled files come in the order they first changed', () => {
    const c = clock();
    const s = createSettler(1000, c.now);
    for (const name of ['b.pdf', 'a.pdf', 'gone.pdf']) s.seen(name, { size: 1, mtimeMs: 1 });
    s.gone('gone.pdf');
    c.advance(1000);
    for (const name of ['a.pdf', 'b.pdf']) s.seen(name, { size: 1, mtimeMs: 1 });
    expect(s.settled().map((x) => x.path)).toEqual(['b.pdf', 'a.pdf']);
  });

  it('a full listing that lacks a file forgets it: waiting or handled', () => {
    const c = clock();
    const s = createSettler(1000, c.now);
    const stamp = { size: 1, mtimeMs: 1 };
    s.handled('moved.pdf', stamp);
    s.seen('waiting.pdf', stamp);
    s.keepOnly(new Set(['other.pdf']));
    expect(s.waiting()).toEqual([]);
    // Dropped back in with the same stamp: a new file again (the journal knows its content).
    s.seen('moved.pdf', stamp);
    expect(s.waiting()).toEqual(['moved.pdf']);
  });
});
