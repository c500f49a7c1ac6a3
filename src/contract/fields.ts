import { z } from 'zod';

/**
 * The Field definition of a parser: the shape every result mirrors.
 * The spec leaves the full list of leaf types open ("not shown"); these are the ones
 * the emulator and its engine understand, documented in the README.
 */
const LEAF_TYPES = [
  'string', // any text, trimmed
  'decimal', // JSON number, never a string ("1.234,50 EUR" -> 1234.5)
  'integer', // JSON integer
  'date', // ISO 8601 calendar date, YYYY-MM-DD
  'boolean', // yes/no, true/false, a checked box
  'email', // an address, lower-cased domain
  'phone', // digits with an optional leading +, as written
  'currency', // ISO 4217 code, upper case (EUR, USD)
] as const;
export const LeafType = z.enum(LEAF_TYPES);
export type LeafType = z.infer<typeof LeafType>;

/** Field names are chosen by the customer; they become JSON keys and CSV column names. */
const FieldName = z
  .string()
  .min(1, 'a field name cannot be empty')
  .max(128)
  .regex(/^[^.\s]+$/, 'a field name has no dots or spaces (dots join nested names in CSV headers)');

const fieldCommon = {
  name: FieldName,
  /** The words the document uses for this field; defaults to the words of the name. */
  label: z.string().min(1).optional(),
  /** Other wordings of the label ("Invoice No.", "Inv #"). */
  aliases: z.array(z.string().min(1)).optional(),
};

export const LeafField = z.strictObject({ ...fieldCommon, type: LeafType });
export type LeafField = z.infer<typeof LeafField>;

export const TableField = z.strictObject({
  ...fieldCommon,
  type: z.literal('table'),
  columns: z.array(LeafField).min(1, 'a table field needs at least one column'),
});
export type TableField = z.infer<typeof TableField>;

export type ObjectField = {
  name: string;
  type: 'object';
  label?: string | undefined;
  aliases?: string[] | undefined;
  fields: Field[];
};
export type Field = LeafField | ObjectField | TableField;

export const ObjectField: z.ZodType<ObjectField> = z.lazy(() =>
  z.strictObject({
    ...fieldCommon,
    type: z.literal('object'),
    fields: FieldDefinition,
  }),
);

export const Field: z.ZodType<Field> = z.lazy(() => z.union([LeafField, ObjectField, TableField]));

/** A list of fields whose names are unique at their level. */
export const FieldDefinition: z.ZodType<Field[]> = z.lazy(() =>
  z.array(Field).superRefine((fields, ctx) => {
    const seen = new Set<string>();
    for (const [i, f] of fields.entries()) {
      if (seen.has(f.name)) {
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `field name "${f.name}" is used twice` });
      }
      seen.add(f.name);
    }
  }),
);
export type FieldDefinition = Field[];

export function isLeaf(field: Field): field is LeafField {
  return field.type !== 'object' && field.type !== 'table';
}
