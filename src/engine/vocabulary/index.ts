import type { Field } from '../../contract/index.ts';
import { LANGUAGES } from './languages.ts';
import { wordsOf } from './role-words.ts';
import { composedLabels } from './roles.ts';
import type { Concept } from './types.ts';

export type { Concept } from './types.ts';

/**
 * The field names that stand for each concept (as the words of the name, joined by "_"),
 * and the types such a field may have. A field named `total` of type decimal reads the
 * total's labels in every language; a field named `total` of type string reads none.
 */
const CONCEPT_NAMES: Record<Concept, { names: readonly string[]; types: readonly Field['type'][] }> = {
  invoice_number: {
    names: [
      'invoice_number',
      'invoice_no',
      'invoice_nr',
      'invoice_num',
      'invoice_id',
      'invoice',
      'number',
      'document_number',
      'bill_number',
      'credit_note_number',
    ],
    types: ['string', 'integer'],
  },
  invoice_date: {
    names: [
      'invoice_date',
      'date',
      'issue_date',
      'document_date',
      'bill_date',
      'date_of_issue',
      'issued',
      'issued_on',
      'invoice_issue_date',
    ],
    types: ['date'],
  },
  due_date: { names: ['due_date', 'payment_due', 'payment_due_date', 'due'], types: ['date'] },
  delivery_date: { names: ['delivery_date', 'service_date', 'date_of_supply'], types: ['date'] },
  order_date: { names: ['order_date', 'po_date'], types: ['date'] },
  total: {
    names: [
      'total',
      'amount',
      'grand_total',
      'total_amount',
      'invoice_total',
      'gross_total',
      'total_gross',
      'gross_amount',
      'invoice_amount',
    ],
    types: ['decimal', 'integer'],
  },
  amount_due: {
    names: ['amount_due', 'balance_due', 'balance', 'total_due', 'amount_payable'],
    types: ['decimal', 'integer'],
  },
  subtotal: {
    names: ['subtotal', 'sub_total', 'net_amount', 'net_total', 'total_net', 'net'],
    types: ['decimal', 'integer'],
  },
  tax: {
    names: ['tax', 'vat', 'tax_amount', 'vat_amount', 'total_tax', 'total_vat', 'sales_tax', 'gst'],
    types: ['decimal', 'integer'],
  },
  paid_amount: { names: ['paid_amount', 'amount_paid', 'deposit', 'prepayment'], types: ['decimal', 'integer'] },
  currency: { names: ['currency', 'currency_code'], types: ['currency'] },
  purchase_order: {
    names: ['purchase_order', 'po_number', 'po', 'order_number', 'purchase_order_number'],
    types: ['string', 'integer'],
  },
  customer_number: {
    names: ['customer_number', 'customer_no', 'customer_id', 'account_number'],
    types: ['string', 'integer'],
  },
  vat_id: { names: ['vat_id', 'vat_number', 'vat_no', 'tax_id', 'vat_reg_no'], types: ['string'] },
  iban: { names: ['iban'], types: ['string'] },
  seller: { names: ['vendor', 'seller', 'supplier', 'issuer', 'biller', 'from'], types: ['object'] },
  buyer: {
    names: ['bill_to', 'billed_to', 'invoice_to', 'buyer', 'customer', 'client', 'sold_to', 'recipient'],
    types: ['object'],
  },
  ship_to: { names: ['ship_to', 'deliver_to', 'delivery_address', 'shipping_address'], types: ['object'] },
};

/** The concepts of parties: an object whose block opens under one of their headings. */
export const PARTY_CONCEPTS: ReadonlySet<Concept> = new Set(['seller', 'buyer', 'ship_to']);

/** The concept a field stands for, by its name and type, or undefined. */
export function conceptOf(field: Pick<Field, 'name' | 'type'>, nameWords: readonly string[]): Concept | undefined {
  const key = nameWords.join('_');
  for (const [concept, spec] of Object.entries(CONCEPT_NAMES) as Array<[Concept, (typeof CONCEPT_NAMES)[Concept]]>) {
    if (spec.names.includes(key) && (spec.types as readonly string[]).includes(field.type)) return concept;
  }
  return undefined;
}

/** Concepts whose value is an identifier: one token-like run, trailing clauses cut. */
export const IDENTIFIER_CONCEPTS: ReadonlySet<Concept> = new Set([
  'invoice_number',
  'purchase_order',
  'customer_number',
]);

/** Every label of every language, with its concept and whether it is a fallback label. */
export function vocabularyLabels(): Array<{ label: string; concept: Concept; fallback: boolean }> {
  const out: Array<{ label: string; concept: Concept; fallback: boolean }> = [];
  for (const { labels: vocabulary } of LANGUAGES) {
    for (const [concept, entry] of Object.entries(vocabulary) as Array<
      [Concept, { labels: readonly string[]; fallback?: readonly string[] }]
    >) {
      for (const label of entry.labels) out.push({ label, concept, fallback: false });
      for (const label of entry.fallback ?? []) out.push({ label, concept, fallback: true });
    }
  }
  for (const { label, concept } of composedLabels()) out.push({ label, concept, fallback: false });
  return out;
}

/**
 * Words that print the document's title before its number: "Facture FA-2017-0010",
 * "Invoice INV-42". Such a cell grounds an invoice number only when nothing labels one.
 */
export const TITLE_WORDS: readonly string[] = wordsOf('titles');
