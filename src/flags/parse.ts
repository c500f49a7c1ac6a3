import { durationFlag, parseCount, parseDuration, parseSize } from './units.ts';
import { ExtractError } from '../errors.ts';
import { attributeOf, type FlagSpec, type FlagTable, type FlagValues, flagLabel } from './spec.ts';

/**
 * A command's flags as commander hands them over (`command.opts()`: text, lists, booleans)
 * parsed by their table into values: sizes in bytes, durations in ms, counts as numbers. Every
 * mistake is a usage error (exit 2) naming the flag. A defaulted flag missing from `raw` (a
 * caller that is not commander) takes the table's default, the same value commander gives.
 */
export function parseFlags<const T extends FlagTable>(table: T, raw: Readonly<Record<string, unknown>>): FlagValues<T> {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table)) {
    const given = raw[attributeOf(key, spec)];
    if (spec.kind === 'switch') values[key] = given === true;
    else if (spec.kind === 'off') values[key] = given === false;
    else if (spec.kind === 'list') values[key] = listOf(key, spec, given);
    // A value flag's --no-<flag> (the "off" in the same table) leaves it false: no value.
    else if (given === false || given === undefined) values[key] = defaultOf(key, spec);
    else values[key] = parseValue(key, spec, given);
  }
  return values as FlagValues<T>;
}

function listOf(key: string, spec: FlagSpec & { kind: 'list' }, given: unknown): unknown {
  const values =
    given === undefined || given === false ? [] : Array.isArray(given) ? given.map(String) : [String(given)];
  return spec.parse === undefined ? values : spec.parse(values, flagLabel(key, spec));
}

function defaultOf(key: string, spec: FlagSpec): unknown {
  if (spec.kind === 'custom')
    return spec.default === undefined ? undefined : spec.parse(spec.default, flagLabel(key, spec));
  return 'default' in spec ? spec.default : undefined;
}

function parseValue(key: string, spec: FlagSpec, given: unknown): unknown {
  const flag = flagLabel(key, spec);
  const text = String(given);
  switch (spec.kind) {
    case 'text':
      if (spec.choices !== undefined && !spec.choices.includes(text))
        throw new ExtractError('usage', `${flag} "${text}": use ${spec.choices.join(', ')}`);
      return text;
    case 'path':
      return text;
    case 'size':
      return parseSize(text, flag);
    case 'duration': {
      const ms = parseDuration(text, flag);
      if (spec.atLeast !== undefined && ms < spec.atLeast.ms)
        throw new ExtractError(
          'usage',
          `${flag} must be at least ${durationFlag(spec.atLeast.ms)}: ${spec.atLeast.why}`,
        );
      return ms;
    }
    case 'count':
      return parseCount(text, flag, spec.min ?? 1);
    case 'custom':
      return spec.parse(text, flag);
    default:
      return given;
  }
}
