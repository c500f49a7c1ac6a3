import { isMoneyMark } from '../values.ts';
import type { Concept } from './types.ts';

/**
 * Labels by meaning: the words of each language that play a role in a label of an amount,
 * a currency or an order's reference, and the labels they compose. Invoices rarely print
 * the dev set's exact wording; they combine a few words: a head that says "an amount"
 * ("Total", "Gesamtbetrag", "Montant") with a qualifier that says which ("net", "Brutto",
 * "HT", "Steuer"), in either order ("Net Total Amount", "Gesamtbetrag Netto", "Montant
 * total brut"), or in one German compound ("Steuerbetrag", "Rechnungswährung"). An order's
 * reference is its words with a number word before or after ("N° BON DE COMMANDE",
 * "Bestellung Nr."). The composed labels join the vocabularies (index.ts) and compete with
 * every other label, the longest winning, as the listed ones do.
 */
type RoleWords = {
  /** Words that say "an amount": the head a qualifier attaches to. */
  heads: readonly string[];
  /** Qualifiers of an amount before tax. */
  net: readonly string[];
  /** Qualifiers of an amount with tax. */
  gross: readonly string[];
  /** Words naming the tax, alone a label of its amount. */
  tax: readonly string[];
  /** The word for an amount after the tax's name ("Tax Amount", "Total tax amount"). */
  amount: string;
  /** Words naming the currency, and heads a compound ends with ("*währung"). */
  currency: readonly string[];
  /** Words naming the buyer's order. */
  order: readonly string[];
  /** How the language numbers a thing before its name ("Numéro de commande"). */
  numberBefore: readonly string[];
  /** German-style compounds: first parts that join a head into one word ("Netto" + "betrag"). */
  compound?: { heads: readonly string[]; net: readonly string[]; gross: readonly string[]; tax: readonly string[] };
};

const ROLES: Readonly<Record<string, RoleWords>> = {
  en: {
    heads: ['Total', 'Total Amount', 'Amount', 'Sum', 'Invoice Total', 'Invoice Amount'],
    net: ['Net', 'Excl VAT', 'Excl Tax', 'Excluding VAT', 'Excluding Tax', 'Before Tax', 'Without VAT'],
    gross: ['Gross', 'Incl VAT', 'Incl Tax', 'Including VAT', 'Including Tax'],
    tax: ['Tax', 'VAT', 'Sales Tax', 'Value Added Tax', 'GST'],
    amount: 'Amount',
    currency: ['Currency', 'Invoice Currency', 'Currency Code', 'Document Currency', 'Billing Currency'],
    order: ['Purchase Order', 'PO', 'Order', 'Your Order', 'Customer Order', 'Buyer Order'],
    numberBefore: [],
  },
  de: {
    heads: ['Gesamtbetrag', 'Gesamtsumme', 'Gesamt', 'Summe', 'Betrag', 'Rechnungsbetrag', 'Rechnungssumme'],
    net: ['Netto', 'ohne USt', 'ohne MwSt', 'exkl USt', 'exkl MwSt', 'vor Steuern'],
    gross: ['Brutto', 'inkl USt', 'inkl MwSt', 'mit USt'],
    tax: ['Steuer', 'Steuern', 'USt', 'MwSt', 'Umsatzsteuer', 'Mehrwertsteuer'],
    amount: 'Betrag',
    currency: ['Währung', 'Rechnungswährung', 'Belegwährung'],
    order: ['Bestellung', 'Ihre Bestellung', 'Bestell', 'Auftrag', 'Ihr Auftrag', 'Kundenauftrag'],
    numberBefore: [],
    compound: {
      heads: ['betrag', 'summe'],
      net: ['netto'],
      gross: ['brutto'],
      tax: ['steuer', 'umsatzsteuer', 'mehrwertsteuer'],
    },
  },
  fr: {
    heads: ['Total', 'Montant', 'Montant total', 'Somme'],
    net: ['HT', 'Hors taxes', 'Hors TVA', 'Net'],
    gross: ['TTC', 'Brut', 'Toutes taxes comprises'],
    tax: ['TVA', 'Taxe', 'Taxes', 'Taxe sur la valeur ajoutée'],
    amount: 'Montant',
    currency: ['Devise', 'Monnaie', 'Devise de facturation', 'Monnaie de facturation'],
    order: ['Bon de commande', 'Commande', 'Votre commande', 'Bon de commande client'],
    numberBefore: ['Numéro de', 'N° de', 'Numéro du', 'N° du', 'Numéro', 'N°', 'No', 'Réf', 'Référence'],
  },
  nl: {
    heads: ['Totaal', 'Bedrag', 'Totaalbedrag'],
    net: ['Excl BTW', 'Exclusief BTW', 'Netto'],
    gross: ['Incl BTW', 'Inclusief BTW', 'Bruto'],
    tax: ['BTW'],
    amount: 'Bedrag',
    currency: ['Valuta', 'Munteenheid'],
    order: ['Bestelling', 'Uw bestelling', 'Inkooporder', 'Order'],
    numberBefore: [],
  },
  es: {
    heads: ['Total', 'Importe', 'Importe total'],
    net: ['Neto', 'Sin IVA', 'Base imponible'],
    gross: ['Bruto', 'Con IVA', 'IVA incluido'],
    tax: ['IVA', 'Impuesto', 'Impuestos'],
    amount: 'Importe',
    currency: ['Moneda', 'Divisa'],
    order: ['Pedido', 'Orden de compra', 'Su pedido'],
    numberBefore: ['Número de', 'N° de', 'Nº de', 'Número'],
  },
  it: {
    heads: ['Totale', 'Importo', 'Importo totale'],
    net: ['Netto', 'Imponibile'],
    gross: ['Lordo', 'IVA inclusa'],
    tax: ['IVA', 'Imposta', 'Imposte'],
    amount: 'Importo',
    currency: ['Valuta', 'Divisa'],
    order: ['Ordine', "Ordine d'acquisto", 'Vostro ordine'],
    numberBefore: ['Numero', 'N°', 'Nr'],
  },
};

/** Number words written after a name ("Bestellung Nr.", "Order No."): one stands for all (labels.ts). */
const NUMBER_AFTER = ['Nr', 'Nummer', 'Number'];

/** Standalone qualifiers of a net amount that label it alone ("Exclusief BTW │ 100,00", "Hors taxes"). */
const NET_ALONE = new Set(['Excl BTW', 'Exclusief BTW', 'Excl VAT', 'Excluding VAT', 'Hors taxes', 'Sin IVA']);

/** Every label the role words compose, with its concept. */
export function composedLabels(): Array<{ label: string; concept: Concept }> {
  const out: Array<{ label: string; concept: Concept }> = [];
  const add = (concept: Concept, label: string) => out.push({ label, concept });
  for (const words of Object.values(ROLES)) {
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

/** The words of every language's net and gross qualifiers, lower case and without accents or dots. */
const QUALIFIER_WORDS: ReadonlySet<string> = new Set(
  Object.values(ROLES).flatMap((w) => [...w.net, ...w.gross].flatMap((q) => plainWords(q))),
);

function plainWords(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== '');
}

/**
 * A label's qualifier written in parentheses ("Total amount (net):", "Betrag (brutto)")
 * unwrapped, so that the label composes with it; other parentheses ("Tax (19%)", "(380)")
 * are left as they are.
 */
function unbracketQualifiers(text: string): string {
  return text.replace(/\(([^()]*)\)/g, (whole, inner: string, at: number) => {
    const words = plainWords(inner);
    // "Rechnungssumme Netto (excl. USt.)": a label qualified already, and its parentheses a gloss.
    if (plainWords(text.slice(0, at)).some((w) => QUALIFIER_WORDS.has(w))) return whole;
    return words.length > 0 && words.every((w) => QUALIFIER_WORDS.has(w)) ? ` ${inner} ` : whole;
  });
}

/** A currency mark between a label's words ("Total € Incl. VAT", "Betrag EUR netto"). */
const INNER_MARK = /(?<=\p{L}\.?)\s+(?:€|\$|£|[A-Z]{3})\s+(?=\p{L})/gu;
/**
 * A cell's text as its label's words compose: a qualifier in parentheses unwrapped
 * (unbracketQualifiers), a currency mark between the words left out. `conceptsOf`: the
 * concepts of the label a text opens with; a mark is left out only when a label is left.
 */
export function labelText(text: string, conceptsOf: (t: string) => ReadonlySet<Concept> | undefined): string {
  let out = text.includes('(') ? unbracketQualifiers(text) : text;
  if (/\s(?:€|\$|£|[A-Z]{3})\s/.test(out)) {
    const marks = out.replace(INNER_MARK, (whole) => (isMoneyMark(whole) ? ' ' : whole));
    if (marks !== out && conceptsOf(marks) !== undefined) out = marks;
  }
  return out;
}

/**
 * What may follow an amount's label to say which currency the amount is in: a code or a
 * symbol ("Total EUR", "Betrag €"), "in EUR" / "en EUR", or a lone "in" whose currency
 * stands in the next cell ("Steuerbetrag in │ EUR │ 56,87").
 */
export function namesCurrencyOfAmount(text: string): boolean {
  if (isMoneyMark(text)) return true;
  const m = /^(?:in|en|em)(?:\s+(.+))?$/iu.exec(text);
  return m !== null && (m[1] === undefined || isMoneyMark(m[1]));
}

/** Words that point a heading at another document ("Rechnung zur Bestellung Nr."): its number is not the invoice's. */
export const POINTING = new Set([
  'zu',
  'zur',
  'zum',
  'fur',
  'for',
  'to',
  'on',
  'per',
  'pour',
  'a',
  'au',
  'aux',
  'sur',
  'bei',
  'aus',
  'from',
  'of',
  'against',
  're',
  'betreffend',
  'betr',
  'gemass',
  'laut',
  'lt',
  'nach',
  'ref',
  'voor',
  'bij',
  'para',
  'por',
  'per',
  'di',
  'del',
  'della',
]);
