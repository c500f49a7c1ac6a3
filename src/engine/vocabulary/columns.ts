import type { Field } from '../../contract/index.ts';

/**
 * The titles invoices print over the columns of their line items, in the six languages,
 * for the columns a Table field commonly has. A column stands for one by its name's words
 * (`unit_price`, `qty`), as a field stands for a concept (index.ts). These titles name a
 * column only inside a header row (tables.ts): "Preis" alone elsewhere on the page is no key.
 * Titles that also name a total ("Gesamtbetrag", "Nettobetrag") keep that meaning outside
 * the table: a label form owns all its fields.
 */
export type ColumnConcept = 'description' | 'quantity' | 'unit_price' | 'line_amount';

const NAMES: Record<ColumnConcept, readonly string[]> = {
  description: ['description', 'item', 'items', 'product', 'service', 'article', 'designation', 'details', 'name'],
  quantity: ['quantity', 'qty', 'units', 'count', 'menge', 'quantite'],
  unit_price: ['unit_price', 'price', 'rate', 'unit_cost', 'price_per_unit', 'unit_amount'],
  line_amount: ['amount', 'line_total', 'total', 'line_amount', 'net_amount', 'amount_net', 'value'],
};

const TITLES: Record<ColumnConcept, readonly string[]> = {
  description: [
    // en
    'Description',
    'Item',
    'Item Description',
    'Product',
    'Product Description',
    'Service',
    'Services',
    'Details',
    'Particulars',
    // de
    'Beschreibung',
    'Bezeichnung',
    'Artikel',
    'Artikelbezeichnung',
    'Artikelbeschreibung',
    'Leistung',
    'Leistungsbeschreibung',
    'Produkt',
    'Text',
    // fr
    'Désignation',
    'Libellé',
    'Produit',
    'Prestation',
    // nl, es, it
    'Omschrijving',
    'Descripción',
    'Concepto',
    'Descrizione',
  ],
  quantity: [
    'Quantity',
    'Qty',
    'Units',
    'Menge',
    'Anzahl',
    'Anz',
    'Quantité',
    'Qté',
    'Aantal',
    'Cantidad',
    'Cant',
    'Quantità',
  ],
  unit_price: [
    'Unit Price',
    'Price',
    'Rate',
    'Unit Cost',
    'Price per Unit',
    'Einzelpreis',
    'Einzel',
    'Preis',
    'Stückpreis',
    'Nettopreis',
    'E-Preis',
    'Preis/Einheit',
    'Preis pro Einheit',
    'Prix unitaire',
    'Prix unitaire HT',
    'PU HT',
    'Prix',
    'Stukprijs',
    'Prijs',
    'Precio unitario',
    'Precio',
    'Prezzo unitario',
    'Prezzo',
  ],
  line_amount: [
    'Amount',
    'Line Total',
    'Total',
    'Net Amount',
    'Gesamt',
    'Gesamtpreis',
    'Betrag',
    'Summe',
    'Nettobetrag',
    'Nettowert',
    'Entgelt',
    'Gesamtbetrag',
    'Positionsbetrag',
    'Pos-Betrag',
    'Montant',
    'Montant HT',
    'Prix HT',
    'Bedrag',
    'Totaal',
    'Importe',
    'Importo',
  ],
};

/** The concept a column stands for, by its name's words and its type, or undefined. */
export function columnConcept(
  column: Pick<Field, 'name' | 'type'>,
  nameWords: readonly string[],
): ColumnConcept | undefined {
  const key = nameWords.join('_');
  for (const [concept, names] of Object.entries(NAMES) as Array<[ColumnConcept, readonly string[]]>) {
    if (!names.includes(key)) continue;
    const fits =
      concept === 'description' ? column.type === 'string' : column.type === 'decimal' || column.type === 'integer';
    if (fits) return concept;
  }
  return undefined;
}

/** The printed titles of a column concept, in every language. */
export function columnTitles(concept: ColumnConcept): readonly string[] {
  return TITLES[concept];
}

/**
 * Titles of columns a Table field seldom asks for (the position, the article number, the
 * unit, the tax rate, a discount), in the six languages. A header cell may print one beside a
 * column's title ("Menge Einheit", "Pos. Produkt"): the cell then stands for that column.
 */
const OTHER_TITLES = new Set(
  [
    // position, article number, reference
    'Pos',
    'Position',
    'Nr',
    'No',
    'Nº',
    'N°',
    '#',
    'Art-Nr',
    'Art.-Nr',
    'Artikel-Nr',
    'Artikelnr',
    'Artikelnummer',
    'Referenz',
    'Referenzen',
    'Reference',
    'References',
    'Ref',
    'Référence',
    'Referencia',
    'Riferimento',
    'Code',
    'SKU',
    // unit
    'Einheit',
    'ME',
    'Unit',
    'UoM',
    'Unité',
    'Eenheid',
    'Unidad',
    'Unità',
    // tax rate, discount, date
    'USt',
    'MwSt',
    'Steuer',
    'Steuersatz',
    'VAT',
    'Tax',
    'TVA',
    'BTW',
    'IVA',
    'Rabatt',
    'Discount',
    'Remise',
    'Korting',
    'Descuento',
    'Sconto',
    'Datum',
    'Date',
  ].map(normalTitle),
);

function normalTitle(title: string): string {
  return title.toLowerCase().replace(/[.:]+$/u, '');
}

/** Whether a title names a column of the kinds a Table field seldom asks for ("Einheit", "Pos.", "MwSt."). */
export function namesOtherColumn(title: string): boolean {
  return OTHER_TITLES.has(normalTitle(title.trim()));
}
