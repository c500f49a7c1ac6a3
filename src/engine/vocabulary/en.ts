import type { Vocabulary } from './types.ts';

export const EN: Vocabulary = {
  invoice_number: { labels: ['Invoice Number', 'Invoice No', 'Invoice #', 'Invoice ID', 'Inv No', 'Bill Number', 'Bill No', 'Credit Note Number', 'Credit Note No', 'Document Number', 'Receipt Number'] },
  invoice_date: { labels: ['Invoice Date', 'Date of Invoice', 'Date of Issue', 'Issue Date', 'Issued On', 'Invoice Dated', 'Bill Date', 'Document Date', 'Credit Note Date'], fallback: ['Date', 'Dated'] },
  due_date: { labels: ['Due Date', 'Payment Due', 'Payment Due Date', 'Due By', 'Pay By', 'Date Due'], fallback: ['Due'] },
  delivery_date: { labels: ['Delivery Date', 'Date of Delivery', 'Service Date', 'Date of Supply', 'Ship Date', 'Shipping Date', 'Service Period'] },
  order_date: { labels: ['Order Date', 'Date of Order', 'PO Date'] },
  total: {
    labels: ['Total', 'Grand Total', 'Invoice Total', 'Total Amount', 'Total Incl VAT', 'Total Including VAT', 'Total Incl Tax', 'Total Including Tax', 'Gross Total', 'Total Gross', 'Total Invoice Amount', 'Invoice Amount', 'Total Due'],
    fallback: ['Amount Due', 'Balance Due', 'Amount Payable', 'Total Payable', 'Please Pay', 'Amount to Pay', 'Balance'],
  },
  amount_due: { labels: ['Amount Due', 'Balance Due', 'Amount Payable', 'Total Payable', 'Please Pay', 'Amount to Pay', 'Total Due'] },
  subtotal: { labels: ['Subtotal', 'Sub Total', 'Sub-total', 'Net Amount', 'Net Total', 'Total Net', 'Total Excl VAT', 'Total Excluding VAT', 'Total Excl Tax', 'Total Before Tax', 'Net'] },
  tax: { labels: ['Tax', 'VAT', 'Sales Tax', 'GST', 'Tax Amount', 'VAT Amount', 'Total Tax', 'Total VAT'] },
  paid_amount: { labels: ['Amount Paid', 'Paid', 'Payments', 'Deposit', 'Prepayment', 'Less Payment'] },
  currency: { labels: ['Currency'] },
  purchase_order: { labels: ['Purchase Order', 'PO Number', 'PO No', 'PO #', 'PO', 'Purchase Order Number', 'Order Number', 'Order No', 'Your Order'] },
  customer_number: { labels: ['Customer Number', 'Customer No', 'Customer ID', 'Account Number', 'Account No'] },
  vat_id: { labels: ['VAT ID', 'VAT No', 'VAT Number', 'VAT Reg No', 'Tax ID', 'Tax Number'] },
  iban: { labels: ['IBAN'] },
};
