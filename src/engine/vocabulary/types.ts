/**
 * Built-in label vocabularies: for each concept a field commonly stands for, the labels
 * invoices print for it, one file per language. `labels` name the concept itself;
 * `fallback` labels are used only when none of the field's own labels is found (a total
 * field reads "Amount Due" when the document prints no grand total). A label whose first
 * word opens with "*" matches any word that ends so ("*rechnung Nr": "Mietrechnung Nr.").
 */
export type Concept =
  | 'invoice_number'
  | 'invoice_date'
  | 'due_date'
  | 'delivery_date'
  | 'order_date'
  | 'total'
  | 'amount_due'
  | 'subtotal'
  | 'tax'
  | 'paid_amount'
  | 'currency'
  | 'purchase_order'
  | 'customer_number'
  | 'vat_id'
  | 'iban'
  /** Parties: the headings of an object's block ("Verkäufer", "Bill To"), not of a leaf. */
  | 'seller'
  | 'buyer'
  | 'ship_to';

export type Vocabulary = Partial<Record<Concept, { labels: readonly string[]; fallback?: readonly string[] }>>;
