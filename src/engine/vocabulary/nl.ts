import type { Vocabulary } from './types.ts';

export const NL: Vocabulary = {
  invoice_number: { labels: ['Factuurnummer', 'Factuur Nr', 'Factuurnr', 'Creditnota Nr', 'Creditnotanummer'] },
  invoice_date: { labels: ['Factuurdatum', 'Datum factuur', 'Factuur datum', 'Uitgiftedatum'], fallback: ['Datum'] },
  due_date: { labels: ['Vervaldatum', 'Uiterste betaaldatum', 'Te betalen voor', 'Betalen voor'] },
  delivery_date: { labels: ['Leverdatum', 'Leveringsdatum'] },
  order_date: { labels: ['Besteldatum', 'Orderdatum'] },
  total: {
    labels: ['Totaal', 'Totaalbedrag', 'Totaal incl BTW', 'Totaal inclusief BTW', 'Factuurbedrag', 'Eindtotaal'],
    fallback: ['Te betalen', 'Openstaand bedrag', 'Nog te betalen'],
  },
  amount_due: { labels: ['Te betalen', 'Openstaand bedrag', 'Nog te betalen'] },
  subtotal: { labels: ['Subtotaal', 'Totaal excl BTW', 'Totaal exclusief BTW', 'Netto bedrag'] },
  tax: { labels: ['BTW', 'BTW bedrag', 'Totaal BTW'] },
  paid_amount: { labels: ['Betaald', 'Aanbetaling', 'Reeds betaald'] },
  currency: { labels: ['Valuta', 'Munteenheid'] },
  purchase_order: { labels: ['Bestelnummer', 'Inkoopordernummer', 'Uw referentie', 'Ordernummer'] },
  customer_number: { labels: ['Klantnummer', 'Debiteurnummer'] },
  vat_id: { labels: ['BTW-nummer', 'BTW nr', 'BTW-id', 'KvK', 'KvK-nummer'] },
  iban: { labels: ['IBAN'] },
  seller: { labels: ['Verkoper', 'Leverancier'] },
  buyer: { labels: ['Koper', 'Factuuradres', 'Gefactureerd aan'] },
  ship_to: { labels: ['Afleveradres', 'Leveringsadres'] },
};
