import type { EmulatorConfigInput, FieldDefinition } from '../contract/index.ts';

/**
 * The Field definition of the built-in "Invoices" parser. fixtures/parsers/invoices.json
 * holds the same definition (a test keeps the two equal) so the invoice fixtures extract
 * out of the box. The invoice's own fields carry no aliases: their names (invoice_number,
 * invoice_date, total, ...) take the built-in vocabularies of six languages
 * (src/engine/vocabulary/), which know which labels are fallbacks ("Balance Due" is the
 * total only when no total is printed); an alias here would outrank them all.
 */
export const INVOICE_FIELDS: FieldDefinition = [
  { name: 'invoice_number', type: 'string', label: 'Invoice Number' },
  { name: 'invoice_date', type: 'date', label: 'Invoice Date' },
  { name: 'due_date', type: 'date', label: 'Due Date' },
  { name: 'purchase_order', type: 'string', label: 'PO Number' },
  {
    name: 'vendor',
    type: 'object',
    label: 'Vendor',
    aliases: ['From', 'Seller', 'Supplier'],
    fields: [
      { name: 'name', type: 'string', label: 'Name', aliases: ['Company'] },
      { name: 'email', type: 'email', label: 'Email', aliases: ['E-mail'] },
      { name: 'phone', type: 'phone', label: 'Phone', aliases: ['Tel', 'Telephone'] },
      { name: 'vat_id', type: 'string', label: 'VAT ID', aliases: ['VAT No', 'Tax ID'] },
    ],
  },
  {
    name: 'bill_to',
    type: 'object',
    label: 'Bill To',
    aliases: ['Billed To', 'Customer', 'Invoice To'],
    fields: [
      { name: 'name', type: 'string', label: 'Name', aliases: ['Company'] },
      { name: 'email', type: 'email', label: 'Email', aliases: ['E-mail'] },
    ],
  },
  { name: 'currency', type: 'currency', label: 'Currency' },
  { name: 'subtotal', type: 'decimal', label: 'Subtotal' },
  { name: 'tax', type: 'decimal', label: 'Tax' },
  { name: 'total', type: 'decimal', label: 'Total' },
  { name: 'paid', type: 'boolean', label: 'Paid' },
  {
    name: 'line_items',
    type: 'table',
    label: 'Line Items',
    columns: [
      { name: 'description', type: 'string', label: 'Description', aliases: ['Item', 'Product', 'Service'] },
      { name: 'quantity', type: 'decimal', label: 'Quantity', aliases: ['Qty', 'Units'] },
      { name: 'unit_price', type: 'decimal', label: 'Unit Price', aliases: ['Price', 'Rate'] },
      { name: 'amount', type: 'decimal', label: 'Amount', aliases: ['Line Total', 'Total'] },
    ],
  },
];

/** `extract serve` with no --config (printed by --print-config). The key is local to the emulator. */
export const DEFAULT_CONFIG: EmulatorConfigInput = {
  // "deployed" plays the deployed application instead (docs/serve-profiles.md).
  profile: 'interface',
  credits: 1000,
  inline: { timeout_ms: 30_000, max_body_bytes: 10 * 1024 * 1024 },
  upload: { expires_in: 900 },
  processing: { ms_per_page: 20, concurrency: 2 },
  parsers: [
    {
      parser_id: 'prs_invoices',
      parser_name: 'Invoices',
      api_keys: ['ext_local_emulator_key_0001'],
      fields: INVOICE_FIELDS,
      webhooks: [],
    },
  ],
};
