import { z } from 'zod';
import { type Field, type FieldDefinition, type LeafType, isLeaf } from './fields.ts';
import { describeZodError } from './problems.ts';

/** A value of a result: what JSON can carry. The exact shape is checked against a Field definition. */
export type LeafValue = string | number | boolean | null;
export type ResultValue = LeafValue | Results | Results[];
export type Results = { [field: string]: ResultValue };

/**
 * Any results object, as it travels on the wire; mirrorsDefinition() checks it against a
 * definition. Taken as it is (a JSON object), not copied key by key as z.record would: the
 * client reads one or two per document, and the copy was most of its validation's cost.
 */
export const Results = z.custom<Results>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'expected an object of results',
);

const ISO_DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

const leafSchemas: Record<LeafType, z.ZodType> = {
  string: z.string(),
  decimal: z.number().finite(),
  integer: z.number().int(),
  date: z.string().regex(ISO_DATE, 'expected an ISO date YYYY-MM-DD'),
  boolean: z.boolean(),
  email: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'expected an email address'),
  phone: z.string().regex(/^\+?[0-9][0-9 ().-]*$/, 'expected a phone number'),
  currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 currency code'),
};

function fieldSchema(field: Field): z.ZodType {
  if (field.type === 'object') return resultsSchemaFor(field.fields);
  if (field.type === 'table') {
    const row = z.strictObject(Object.fromEntries(field.columns.map((c) => [c.name, leafSchemas[c.type].nullable()])));
    // A table the engine cannot ground is null, like any field not grounded (spec: Results shape, 5).
    return z.array(row).nullable();
  }
  if (isLeaf(field)) return leafSchemas[field.type].nullable();
  throw new Error('unreachable');
}

/**
 * The schema of results that mirror a Field definition exactly: every field present,
 * each leaf null or of its declared type, Object fields nested, Table fields null or arrays of
 * rows with exactly the column keys, and no other keys.
 */
function resultsSchemaFor(fields: FieldDefinition): z.ZodObject {
  return z.strictObject(Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])));
}

export type MirrorCheck = { ok: true } | { ok: false; problems: string };

/** Checks that `results` mirrors `fields` exactly; the problems name the paths that do not. */
export function mirrorsDefinition(fields: FieldDefinition, results: unknown): MirrorCheck {
  const parsed = resultsSchemaFor(fields).safeParse(results);
  if (parsed.success) return { ok: true };
  return { ok: false, problems: describeZodError(parsed.error) };
}

/** Results in which every field holds nothing: leaves null, objects of nulls, tables null. */
export function emptyResults(fields: FieldDefinition): Results {
  const out: Results = {};
  for (const f of fields) out[f.name] = f.type === 'object' ? emptyResults(f.fields) : null;
  return out;
}
