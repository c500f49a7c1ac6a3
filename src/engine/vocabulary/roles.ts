import { LANGUAGES } from './languages.ts';
import type { Concept } from './types.ts';

/**
 * Labels by meaning: the words of each language that play a role in a label of an amount,
 * a currency or an order's reference (each language's `compose` words), and the labels they
 * compose. Invoices rarely print the dev set's exact wording; they combine a few words: a
 * head that says "an amount" ("Total", "Gesamtbetrag", "Montant") with a qualifier that says
 * which ("net", "Brutto", "HT", "Steuer"), in either order ("Net Total Amount", "Gesamtbetrag
 * Netto", "Montant total brut"), or in one German compound ("Steuerbetrag",
 * "Rechnungswährung"). An order's reference is its words with a number word before or after
 * ("N° BON DE COMMANDE", "Bestellung Nr."). The composed labels join the vocabularies
 * (index.ts) and compete with every other label, the longest winning, as the listed ones do.
 */

/** Number words written after a name ("Bestellung Nr.", "Order No."), of every language. */
const NUMBER_AFTER = LANGUAGES.flatMap((l) => l.words.numberAfter ?? []);

/** Standalone qualifiers of a net amount that label it alone ("Exclusief BTW │ 100,00", "Hors taxes"). */
const NET_ALONE = new Set(LANGUAGES.flatMap((l) => l.words.netAlone ?? []));

/** Every label the role words compose, with its concept. */
export function composedLabels(): Array<{ label: string; concept: Concept }> {
  const out: Array<{ label: string; concept: Concept }> = [];
  const add = (concept: Concept, label: string) => out.push({ label, concept });
  for (const { compose: words } of LANGUAGES.map((l) => l.words)) {
    for (const head of words.heads) {
      for (const q of words.net) for (const l of [`${head} ${q}`, `${q} ${head}`]) add('subtotal', l);
      for (const q of words.gross) for (const l of [`${head} ${q}`, `${q} ${head}`]) add('total', l);
      for (const t of words.tax) for (const l of [`${head} ${t}`, `${t} ${head}`]) add('tax', l);
    }
    for (const t of words.tax) {
      add('tax', t);
      add('tax', `${t} ${words.amount}`);
      for (const head of words.heads) add('tax', `${head} ${t} ${words.amount}`);
    }
    for (const q of words.net) if (NET_ALONE.has(q)) add('subtotal', q);
    for (const c of words.currency) add('currency', c);
    for (const order of words.order) {
      // The order's words alone label its reference too ("Su pedido: PO-1", "Vs. ordine"): a page
      // that prints one of them beside another order label with a different value then gives null.
      add('purchase_order', order);
      for (const n of NUMBER_AFTER) add('purchase_order', `${order} ${n}`);
      for (const n of words.numberBefore) add('purchase_order', `${n} ${order}`);
      if (words.numberBefore.length > 0) add('purchase_order', `N° ${order}`);
    }
    const compound = words.compound;
    if (compound) {
      for (const h of compound.heads) {
        for (const q of compound.net) add('subtotal', `${q}${h}`);
        for (const q of compound.gross) add('total', `${q}${h}`);
        for (const t of compound.tax) add('tax', `${t}${h}`);
      }
    }
  }
  // "Rechnungswährung", "Zahlungswährung": a German compound that ends in the currency's word.
  add('currency', '*währung');
  return out;
}
