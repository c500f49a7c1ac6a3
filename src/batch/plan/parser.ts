import type { ClientDeps } from '../../client/deps.ts';
import { candidates, identityOf, learned, lookup, type Identity } from '../../journal/identity.ts';
import { stateKey, type KnownLookup, type ParserFact } from '../../journal/journal.ts';
import type { StateJournal } from '../../journal/state/index.ts';
import { replan, type Job } from './jobs.ts';
import type { ProbedService } from './probe.ts';

/**
 * A run about to send contents that another key's documents hold asks the service whether this
 * key can read them (probe.ts: a read, never a charge). If it can, the two keys are one parser:
 * the fact is journaled and those files are planned again under it (done, collected or left as
 * that history says); if it cannot, the other key is ruled out and not asked about again.
 */
export async function settleIdentity(
  jobs: Job[],
  seen: { known: KnownLookup; parsers: Map<string, ParserFact>; identity: Identity; foreign: Set<string> },
  ctx: { journal: StateJournal; service: ProbedService; deps: ClientDeps; retryFailed: boolean },
): Promise<Identity> {
  const { known, parsers, identity, foreign } = seen;
  const fresh = jobs.filter((j) => j.action === 'submit' && j.prior === undefined && j.unhashed === undefined);
  const ahead = (targets: Iterable<string>) =>
    known.prefetch?.(fresh.flatMap((j) => Array.from(targets, (target) => stateKey(j.sha256, target))));
  await ahead(foreign);
  const found = candidates(
    known,
    fresh.map((j) => j.sha256),
    identity,
    foreign,
  );
  if (found.length === 0) return identity;
  const { probe } = await import('./probe.ts');
  const shown = await probe(ctx.service, found, ctx.deps);
  const facts = learned(identity, parsers, shown.seen, shown.unseen, new Date(ctx.deps.now()));
  for (const fact of facts) await ctx.journal.append(fact);
  const next = identityOf(identity.key, new Map([...parsers, ...facts.map((f) => [f.target, f] as const)]));
  if (shown.seen.length > 0)
    ctx.deps.log(
      'info',
      'this API key reads documents the journal holds under another key: they are the same parser, and what the journal knows of them stands (nothing is sent again)',
    );
  if (shown.unseen.length > 0 && shown.seen.length === 0)
    ctx.deps.log(
      'warn',
      "this API key is another parser's than the key these files were extracted with before (it cannot read their documents): they are extracted again, and paid, with this key's parser and its fields. To keep the earlier results, run with the earlier key",
    );
  await ahead(next.targets);
  for (const job of fresh) {
    const { key, target, prior } = lookup(known, job.sha256, next);
    if (prior === undefined) continue;
    Object.assign(job, replan({ ...job, key, target }, prior, ctx.retryFailed, false));
  }
  return next;
}
