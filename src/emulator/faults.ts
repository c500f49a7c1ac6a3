import type { FaultEffect, FaultOperation, FaultRule, FaultRuleInput } from '../contract/index.ts';
import {
  FAULT_STATUSES,
  FaultOperation as FaultOperations,
  FaultRuleInput as FaultRuleSchema,
} from '../contract/index.ts';
import type { EmulatorDeps } from './clock.ts';

/**
 * Fault injection, in the spirit of LocalStack's chaos API and WireMock's faults: rules
 * per operation with a probability and an effect. Draws come from a seeded generator, so
 * a run with --seed is repeatable. Knows nothing of HTTP: routes and the dispatcher ask
 * `draw(operation)` and apply the effect themselves.
 */
export type Faults = {
  list(): FaultRule[];
  add(rule: FaultRuleInput): FaultRule;
  remove(id: string): boolean;
  clear(): void;
  /** The effect to apply to one occurrence of `operation`, or null. The first matching rule that fires wins. */
  draw(operation: FaultOperation): FaultEffect | null;
  /** Whether a rule for `operation` may still fire (draw could return an effect). */
  armed(operation: FaultOperation): boolean;
};

/** mulberry32: a small, well-known seeded generator; Math.random cannot be seeded. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function createFaults(input: {
  rules: readonly FaultRuleInput[];
  seed?: number | undefined;
  deps: EmulatorDeps;
}): Faults {
  const random = input.seed === undefined ? Math.random : seededRandom(input.seed);
  let rules: FaultRule[] = [];
  let counter = 0;
  const faults: Faults = {
    list: () => rules.map((r) => ({ ...r })),
    add(rule) {
      const parsed = FaultRuleSchema.parse(rule);
      const stored: FaultRule = { ...parsed, id: `flt_${++counter}`, applied: 0 };
      rules.push(stored);
      return { ...stored };
    },
    remove(id) {
      const before = rules.length;
      rules = rules.filter((r) => r.id !== id);
      return rules.length !== before;
    },
    clear() {
      rules = [];
    },
    draw(operation) {
      for (const rule of rules) {
        if (rule.operation !== operation) continue;
        if (rule.times !== undefined && rule.applied >= rule.times) continue;
        if (rule.probability < 1 && random() >= rule.probability) continue;
        rule.applied += 1;
        return rule.effect;
      }
      return null;
    },
    armed(operation) {
      for (const rule of rules)
        if (rule.operation === operation && (rule.times === undefined || rule.applied < rule.times)) return true;
      return false;
    },
  };
  for (const r of input.rules) faults.add(r);
  return faults;
}

/** The wait of a latency effect: fixed, or drawn between min and max. */
export function latencyOf(
  effect: Extract<FaultEffect, { type: 'latency' }>,
  random: () => number = Math.random,
): number {
  if (effect.ms !== undefined) return effect.ms;
  const min = effect.min_ms ?? 0;
  const max = Math.max(min, effect.max_ms ?? min);
  return Math.round(min + (max - min) * random());
}

/**
 * Parses the compact flag form `--fault OPERATION:PROBABILITY:EFFECT`, for example
 * `extract-inline:0.1:503`, `documents:0.2:latency=200-800`, `upload:0.05:reset`,
 * `extract-async:0.1:error`, `webhook:0.3:drop`.
 */
export function parseFaultFlag(text: string): FaultRuleInput {
  const [operation, probability, effectText = ''] = text.split(':');
  const effect = ((): FaultRuleInput['effect'] | undefined => {
    const status = FAULT_STATUSES.find((s) => String(s) === effectText);
    if (status !== undefined) return { type: 'status', status };
    const latency = /^latency=(\d+)(?:-(\d+))?$/.exec(effectText);
    if (latency)
      return latency[2]
        ? { type: 'latency', min_ms: Number(latency[1]), max_ms: Number(latency[2]) }
        : { type: 'latency', ms: Number(latency[1]) };
    if (effectText === 'reset' || effectText === 'reset-after')
      return { type: 'reset', when: effectText === 'reset' ? 'before' : 'after' };
    if (effectText === 'truncate') return { type: 'truncate' };
    if (effectText === 'stall') return { type: 'stall' };
    if (effectText === 'error') return { type: 'async_error' };
    if (effectText === 'drop' || effectText === 'duplicate') return { type: effectText };
    const delay = /^delay=(\d+)$/.exec(effectText);
    if (delay) return { type: 'delay', ms: Number(delay[1]) };
    return undefined;
  })();
  const parsed = FaultRuleSchema.safeParse({ operation, probability: Number(probability), effect });
  if (!parsed.success || effect === undefined) {
    throw new Error(
      `--fault ${JSON.stringify(text)} is not OPERATION:PROBABILITY:EFFECT ` +
        `(operations: ${FaultOperations.options.join(', ')}; effects: ${FAULT_STATUSES.join('|')}, ` +
        'latency=MS or latency=MIN-MAX, reset, reset-after, truncate, stall, error (extract-async only), ' +
        'drop, duplicate, delay=MS (webhook only))',
    );
  }
  return parsed.data;
}
