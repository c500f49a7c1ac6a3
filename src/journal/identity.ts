import { asLookup, stateKey, type KnownLookup, type KnownState, type ParserFact } from './journal.ts';

/** What the journal knows: a lookup into it, or a replay's map. */
type Known = KnownLookup | ReadonlyMap<string, KnownState>;

/**
 * Whose documents a run works on. The journal keys a document by (target, sha256); a target is
 * the fingerprint of (base URL, API key), so it never holds the key. A parser may have several
 * keys (a rotated key, one per machine): the first key seen for a parser names its target, and
 * a later key shown to see that parser's documents is recorded as belonging to it (a `parser`
 * fact), so its runs find them and pay nothing. A key of another parser sees none of them and
 * sends each document once for its own parser, as it must: results are shaped by the parser.
 *
 * Shown, not assumed: a key is tied to a parser by reading one of that parser's documents with
 * it (batch/plan/probe.ts), which the spec lets only a key of the same parser do, since keys are
 * scoped to one parser; nothing is paid for that.
 */
export type Identity = {
  /** The key's own fingerprint. */
  key: string;
  /** Where this run's new facts go: its parser's target. */
  primary: string;
  /** Every target the parser's documents are journaled under, primary first. */
  targets: readonly string[];
  /** Targets this key was shown not to see (another parser's). */
  not: ReadonlySet<string>;
};

/** Parser facts are followed at most this far (a chain of merged groups; a loop written by hand stops). */
const MAX_HOPS = 8;

export function identityOf(fingerprint: string, parsers: ReadonlyMap<string, ParserFact>): Identity {
  const groupOf = (target: string): string => {
    let group = target;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = parsers.get(group)?.parser;
      if (next === undefined || next === group) break;
      group = next;
    }
    return group;
  };
  const primary = groupOf(fingerprint);
  const targets = [primary];
  for (const target of parsers.keys()) if (target !== primary && groupOf(target) === primary) targets.push(target);
  if (!targets.includes(fingerprint)) targets.push(fingerprint);
  return { key: fingerprint, primary, targets, not: new Set(parsers.get(fingerprint)?.not ?? []) };
}

/** An identity with one target and nothing learned: a dry run without a key, tests. */
export function soleIdentity(target: string): Identity {
  return { key: target, primary: target, targets: [target], not: new Set() };
}

export type Found = { target: string; key: string; prior: KnownState | undefined };

/**
 * What the journal knows of a content under any of the parser's targets: the most advanced state
 * (completed, then submitted, then a send in flight, then a failure), or nothing (then the
 * document goes under the primary target).
 */
export function lookup(known: Pick<KnownLookup, 'get'>, sha256: string, identity: Identity): Found {
  const targets = identity.targets;
  const first = stateKey(sha256, identity.primary);
  if (targets.length === 1) return { target: identity.primary, key: first, prior: known.get(first) };
  let best: Found = { target: identity.primary, key: first, prior: known.get(first) };
  for (const target of targets) {
    if (target === identity.primary) continue;
    const key = stateKey(sha256, target);
    const prior = known.get(key);
    if (prior !== undefined && rank(prior) > rank(best.prior)) best = { target, key, prior };
  }
  return best;
}

function rank(state: KnownState | undefined): number {
  switch (state?.fact) {
    case 'completed':
      return 4;
    case 'submitted':
      return 3;
    case 'sending':
      return 2;
    case 'failed':
      return 1;
    default:
      return 0;
  }
}

/**
 * The targets the journal holds documents under that may be this key's parser under another
 * key: neither the parser's own nor ruled out. Asked of the journal's index (targets are few).
 */
export function foreignTargets(known: Known, identity: Identity): Set<string> {
  const others = new Set<string>();
  for (const target of asLookup(known).targets())
    if (!identity.targets.includes(target) && !identity.not.has(target)) others.add(target);
  return others;
}

/** A document another target holds that this key could be shown to see. */
export type Candidate = { target: string; documentId: string; fact: KnownState };

/**
 * Targets outside this key's parser (and not ruled out) that hold one of these contents with a
 * document_id: the keys that may be this parser's under another name. One document each, a
 * completed one when there is one. A lookup per content and target, made only by a run that has
 * contents to send.
 */
export function candidates(
  known: Known,
  sha256s: Iterable<string>,
  identity: Identity,
  others = foreignTargets(known, identity),
): Candidate[] {
  if (others.size === 0) return [];
  const lookups = asLookup(known);
  const found = new Map<string, Candidate>();
  for (const sha256 of sha256s) {
    for (const target of others) {
      const fact = lookups.get(stateKey(sha256, target));
      if (fact === undefined || (fact.fact !== 'completed' && fact.fact !== 'submitted')) continue;
      const seen = found.get(target);
      if (seen === undefined || (seen.fact.fact !== 'completed' && fact.fact === 'completed'))
        found.set(target, { target, documentId: fact.document_id, fact });
    }
  }
  return [...found.values()];
}

/**
 * The parser facts that record what a probe showed: this key belongs to the first target it
 * sees (or stays with the parser it had joined), with the targets it cannot see ruled out; any
 * other target it sees is the same parser too, and joins it. Empty when the probe showed nothing.
 */
export function learned(
  identity: Identity,
  parsers: ReadonlyMap<string, ParserFact>,
  seen: readonly string[],
  unseen: readonly string[],
  at: Date,
): ParserFact[] {
  if (seen.length === 0 && unseen.length === 0) return [];
  const when = at.toISOString();
  // A key already joined to a parser stays there (what it sees joins it); a key on its own joins what it sees.
  const parser = identity.primary !== identity.key ? identity.primary : (seen[0] ?? identity.primary);
  const not = [...new Set([...identity.not, ...unseen])];
  // What the service offers (client/offers.ts) is kept on the key's fact, whatever the probe showed.
  const offers = parsers.get(identity.key)?.offers;
  const facts: ParserFact[] = [
    {
      fact: 'parser',
      at: when,
      target: identity.key,
      parser,
      ...(not.length > 0 ? { not } : {}),
      ...(offers !== undefined ? { offers } : {}),
    },
  ];
  for (const other of seen) {
    if (other === parser) continue;
    const was = parsers.get(other)?.not;
    facts.push({ fact: 'parser', at: when, target: other, parser, ...(was !== undefined ? { not: was } : {}) });
  }
  return facts;
}
