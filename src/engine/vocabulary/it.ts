import type { Vocabulary } from './types.ts';

export const IT: Vocabulary = {
  invoice_number: {
    labels: ['Numero fattura', 'Fattura N°', 'Fattura Nr', 'Fattura n', 'N° fattura', 'Nr fattura', 'Numero documento'],
  },
  invoice_date: {
    labels: ['Data fattura', 'Data della fattura', 'Data emissione', 'Data documento', 'Data di emissione'],
    fallback: ['Data'],
  },
  due_date: { labels: ['Data scadenza', 'Scadenza', 'Data di scadenza'] },
  delivery_date: { labels: ['Data consegna', 'Data di consegna'] },
  order_date: { labels: ['Data ordine'] },
  total: {
    labels: [
      'Totale',
      'Totale fattura',
      'Totale documento',
      'Importo totale',
      'Totale IVA inclusa',
      'Totale complessivo',
    ],
    fallback: ['Totale da pagare', 'Netto a pagare', 'Importo da pagare', 'Saldo'],
  },
  amount_due: { labels: ['Totale da pagare', 'Netto a pagare', 'Importo da pagare', 'Saldo'] },
  subtotal: { labels: ['Imponibile', 'Subtotale', 'Totale imponibile', 'Totale netto'] },
  tax: { labels: ['IVA', 'Imposta', 'Totale IVA', 'Importo IVA'] },
  paid_amount: { labels: ['Acconto', 'Già pagato', 'Pagato'] },
  currency: { labels: ['Valuta', 'Divisa'] },
  purchase_order: { labels: ['Numero ordine', 'N° ordine', 'Ordine N°', 'Vostro ordine', 'Riferimento ordine'] },
  customer_number: { labels: ['Codice cliente', 'Numero cliente', 'Cod cliente'] },
  vat_id: { labels: ['Partita IVA', 'P IVA', 'P.IVA', 'Codice fiscale'] },
  iban: { labels: ['IBAN'] },
  seller: { labels: ['Venditore', 'Fornitore', 'Cedente'] },
  buyer: { labels: ['Acquirente', 'Cessionario', 'Intestatario'] },
  ship_to: { labels: ['Indirizzo di consegna', 'Destinazione merce'] },
};
