import { describe, expect, it } from 'vitest';
import { candidates, foreignTargets, identityOf, learned, lookup, soleIdentity } from '../../src/journal/identity.ts';
import { knownFromMap, stateKey, type KnownState, type ParserFact } from '../../src/journal/journal.ts';

/** Whose documents a key sees (journal/identity.ts): parser facts followed, lookups across a parser's targets. */

const at = '2026-01-01T00:00:00.000Z';
const parser = (target: string, of: string, not?: string[]): ParserFact => ({
  fact: 'parser',
  at,
  target,
  parser: of,
  ...(not ? { not } : {}),
});
const parsers = (...facts: ParserFact[]) => new Map(facts.map((f) => [f.target, f]));
const common = (target: string, sha256 = 'sha') => ({ at, sha256, target, file: 'a.pdf' });
const completed = (target: string, sha256 = 'sha', id = `doc-${target}`): KnownState => ({
  fact: 'completed',
  ...common(target, sha256),
  route: 'inline',
  document_id: id,
  page_count: 1,
  results: {},
});
const submitted = (target: string, sha256 = 'sha', id = `sub-${target}`): KnownState => ({
  fact: 'submitted',
  ...common(target, sha256),
  route: 'upload',
  document_id: id,
});
const sending = (target: string): KnownState => ({ fact: 'sending', ...common(target), route: 'inline' });
const failed = (target: string, sha256 = 'sha'): KnownState => ({
  fact: 'failed',
  ...common(target, sha256),
  route: 'inline',
  document_id: null,
  reason: 'x',
  retryable: true,
});
const known = (...states: KnownState[]) => new Map(states.map((s) => [stateKey(s.sha256, s.target), s]));

describe('identity: whose documents a key sees', () => {
  it('a key on its own: its own target only', () => {
    expect(identityOf('k1', new Map())).toEqual({ key: 'k1', primary: 'k1', targets: ['k1'], not: new Set() });
    expect(soleIdentity('k1')).toEqual(identityOf('k1', new Map()));
  });

  it("a key joined to a parser works under the parser's target, and sees the parser's other keys", () => {
    const p = parsers(parser('k2', 'k1'), parser('k3', 'k1'), parser('k4', 'other'), parser('k5', 'k5'));
    const id = identityOf('k2', p);
    expect(id.primary).toBe('k1');
    expect(id.targets).toEqual(['k1', 'k2', 'k3']);
    expect(identityOf('k1', p).targets).toEqual(['k1', 'k2', 'k3']);
    expect(identityOf('k5', p).targets).toEqual(['k5']);
  });

  it('parser facts are followed along a chain, and a loop written by hand stops', () => {
    const chain = parsers(parser('a', 'b'), parser('b', 'c'), parser('c', 'd'));
    expect(identityOf('a', chain).primary).toBe('d');
    expect(identityOf('a', chain).targets).toEqual(['d', 'a', 'b', 'c']);
    const loop = parsers(parser('x', 'y'), parser('y', 'x'));
    const id = identityOf('x', loop);
    expect(['x', 'y']).toContain(id.primary);
    expect(id.targets).toContain('x');
    // Eight hops at most: a longer chain stops at the eighth.
    const long = parsers(...Array.from({ length: 12 }, (_, i) => parser(`t${i}`, `t${i + 1}`)));
    expect(identityOf('t0', long).primary).toBe('t8');
  });

  it('the targets a key was shown not to see', () => {
    expect(identityOf('k1', parsers(parser('k1', 'k1', ['o1', 'o2']))).not).toEqual(new Set(['o1', 'o2']));
    expect(identityOf('k1', parsers(parser('k1', 'k1'))).not).toEqual(new Set());
  });
});

describe('identity: lookups across a parser', () => {
  const id = identityOf('k2', parsers(parser('k2', 'k1'), parser('k3', 'k1')));

  it('one target: its own state, under its key', () => {
    const s = completed('k1');
    expect(lookup(knownFromMap(known(s)), 'sha', soleIdentity('k1'))).toEqual({
      target: 'k1',
      key: stateKey('sha', 'k1'),
      prior: s,
    });
    expect(lookup(knownFromMap(new Map()), 'sha', soleIdentity('k1')).prior).toBeUndefined();
  });

  it('the most advanced state under any target: completed, submitted, in flight, failed', () => {
    const pick = (...states: KnownState[]) => lookup(knownFromMap(known(...states)), 'sha', id);
    expect(pick(failed('k1'), completed('k3'))).toMatchObject({ target: 'k3', key: stateKey('sha', 'k3') });
    expect(pick(completed('k1'), submitted('k3'))).toMatchObject({ target: 'k1' });
    expect(pick(failed('k1'), submitted('k2'), sending('k3'))).toMatchObject({ target: 'k2' });
    expect(pick(sending('k1'), failed('k3'))).toMatchObject({ target: 'k1' });
    expect(pick(failed('k3'))).toMatchObject({ target: 'k3' });
    expect(pick(submitted('k2'), submitted('k3'))).toMatchObject({ target: 'k2' });
    // Each rank above the next: a later target's state wins only when it is further on.
    expect(pick(submitted('k1'), completed('k3'))).toMatchObject({ target: 'k3' });
    expect(pick(sending('k1'), submitted('k3'))).toMatchObject({ target: 'k3' });
    expect(pick(failed('k1'), sending('k3'))).toMatchObject({ target: 'k3' });
    expect(pick()).toEqual({ target: 'k1', key: stateKey('sha', 'k1'), prior: undefined });
  });

  it("foreign targets: neither the parser's nor ruled out", () => {
    const ruled = identityOf('k2', parsers(parser('k2', 'k1', ['o2']), parser('k3', 'k1')));
    const map = known(completed('k1'), completed('o1'), completed('o2'), completed('k3'));
    expect(foreignTargets(map, ruled)).toEqual(new Set(['o1']));
    expect(foreignTargets(knownFromMap(map), ruled)).toEqual(new Set(['o1']));
  });

  it('candidates: one document per foreign target holding the content, a completed one first', () => {
    const map = known(
      submitted('o1', 's1'),
      completed('o1', 's2'),
      submitted('o2', 's1'),
      failed('o3', 's1'),
      { fact: 'sending', ...common('o4', 's1'), route: 'inline' },
      completed('k1', 's1'),
    );
    const found = candidates(map, ['s1', 's2'], id);
    expect(found).toEqual([
      { target: 'o1', documentId: 'doc-o1', fact: map.get(stateKey('s2', 'o1')) },
      { target: 'o2', documentId: 'sub-o2', fact: map.get(stateKey('s1', 'o2')) },
    ]);
    // A completed one is kept over a later submitted one.
    const kept = known(completed('o1', 's1'), submitted('o1', 's2'));
    expect(candidates(kept, ['s1', 's2'], id)).toEqual([
      { target: 'o1', documentId: 'doc-o1', fact: kept.get(stateKey('s1', 'o1')) },
    ]);
    // Two completed: the first stays.
    const done = known(completed('o1', 's1', 'c1'), completed('o1', 's2', 'c2'));
    expect(candidates(done, ['s1', 's2'], id)).toMatchObject([{ documentId: 'c1' }]);
    // Two submitted: the first stays.
    const two = known(submitted('o1', 's1', 'first'), submitted('o1', 's2', 'second'));
    expect(candidates(two, ['s1', 's2'], id)).toMatchObject([{ documentId: 'first' }]);
    expect(candidates(map, ['s1'], id, new Set())).toEqual([]);
    expect(candidates(new Map(), ['s1'], id)).toEqual([]);
  });
});

describe('identity: what a probe teaches', () => {
  const when = new Date(at);

  it('nothing shown, nothing learned', () => {
    expect(learned(soleIdentity('k1'), new Map(), [], [], when)).toEqual([]);
  });

  it('a key on its own joins the first parser it sees; the others it sees join it too', () => {
    const p = parsers(parser('o2', 'o2', ['z']));
    expect(learned(soleIdentity('k1'), p, ['o1', 'o2'], ['x'], when)).toEqual([
      { fact: 'parser', at, target: 'k1', parser: 'o1', not: ['x'] },
      { fact: 'parser', at, target: 'o2', parser: 'o1', not: ['z'] },
    ]);
  });

  it('a key already joined stays with its parser; what it sees joins it', () => {
    const id = identityOf('k2', parsers(parser('k2', 'k1', ['x'])));
    expect(learned(id, new Map(), ['o1', 'k1'], ['y', 'x'], when)).toEqual([
      { fact: 'parser', at, target: 'k2', parser: 'k1', not: ['x', 'y'] },
      { fact: 'parser', at, target: 'o1', parser: 'k1' },
    ]);
  });

  it('nothing ruled out: no `not` at all; a joining target without one gets none', () => {
    expect(learned(soleIdentity('k1'), new Map(), ['o1', 'o2'], [], when)).toStrictEqual([
      { fact: 'parser', at, target: 'k1', parser: 'o1' },
      { fact: 'parser', at, target: 'o2', parser: 'o1' },
    ]);
  });

  it('a key that sees nothing is its own parser, with what it cannot see ruled out', () => {
    expect(learned(soleIdentity('k1'), new Map(), [], ['o1'], when)).toEqual([
      { fact: 'parser', at, target: 'k1', parser: 'k1', not: ['o1'] },
    ]);
  });
});
