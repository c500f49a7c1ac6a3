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

/**
 * The words of a language that compose the labels of amounts, currencies and orders
 * (roles.ts): a head ("Total") with a qualifier ("net"), in either order or as one compound.
 */
type ComposingWords = {
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

/**
 * A language's words by the role they play on a page, beside its labels: every rule of the
 * engine that reads words reads them here (role-words.ts joins the languages). Words are
 * lower case without accents where the rule compares normalised words (`words`); entries
 * named `…Patterns` are regular-expression sources, case-insensitive (a word with optional
 * parts: "ansprechpartner(?:in)?").
 */
export type LanguageWords = {
  compose: ComposingWords;
  /** A document's titles, which print its number after them ("Facture FA-2017-0010"): words. */
  titles?: readonly string[];
  /** Number words written after a name ("Bestellung Nr.", "Order Number"). */
  numberAfter?: readonly string[];
  /** Net qualifiers that label a net amount alone ("Exclusief BTW │ 100,00"): some of `compose.net`. */
  netAlone?: readonly string[];
  /** Number words that compare equal in labels ("No.", "Nr", "#"): words. */
  numberWords?: readonly string[];
  /** Last words of a field's name that say "identifier" (`order_ref`): words. */
  idWords?: readonly string[];
  /** Words pointing a heading at another document ("Rechnung zur Bestellung Nr."): words. */
  pointing?: readonly string[];
  /** Words after a total's label that make it another amount ("Total net", "der Zuschläge"): words. */
  notTotal?: readonly string[];
  /** Words after a total's label that say the tax is in it ("Total incl. VAT"): words. */
  inclusive?: readonly string[];
  /** Of those, net words that still make it another amount ("Total inkl. … netto"): words. */
  netNotInclusive?: readonly string[];
  /** Words that open an addressee's name rather than being it ("Herrn", "Mrs."): words. */
  salutations?: readonly string[];
  /** Yes and no as a boolean's value: words, lower case. */
  yes?: readonly string[];
  no?: readonly string[];
  /** What opens a clause after an identifier that dates it ("vom", "issued at"). */
  dateClausePatterns?: readonly string[];
  /** Words of a VAT-id label that make it another party's than the seller's ("client", "Ihre"). */
  otherPartyPatterns?: readonly string[];
  /** Words that open a heading over the addressee's own details ("Vos identifiants", "Your details"). */
  yoursPatterns?: readonly string[];
  /** Headings of a tax representative ("Représentant fiscal", "Steuervertreter"). */
  representativePatterns?: readonly string[];
  /** Words that say a line names a contact person ("Ansprechpartner", "Attn"). */
  contactPatterns?: readonly string[];
  /** A department on a line of its own ("Accounts Payable", "Buchhaltung"). */
  departmentPatterns?: readonly string[];
  /** A postal endorsement over an address ("Einschreiben", "Private & Confidential"). */
  endorsementPatterns?: readonly string[];
  /** What ends a street's name before its number ("…straße 5", "… Road 12"). */
  streetSuffixPatterns?: readonly string[];
  /** What opens a street's name ("rue …", "via …"). */
  streetPrefixPatterns?: readonly string[];
  /** Words of a clause about paying the invoice ("zahlbar", "payable"). */
  payingPatterns?: readonly string[];
  /** Words of a clause about an early-payment discount ("Skonto"). */
  discountPatterns?: readonly string[];
  /** Words of a clause about a payment made ("bezahlt", "received"). */
  paidPatterns?: readonly string[];
  /** What stands right before a deadline's date ("bis zum", "no later than"). */
  deadlinePatterns?: readonly string[];
  /** "Due" words that, with `dueOnPatterns` after them, stand before a deadline's date ("fällig am", "due on"). */
  duePatterns?: readonly string[];
  dueOnPatterns?: readonly string[];
  /** A column title that names only a total ("Summe", "Total TTC"). */
  totalsTitlePatterns?: readonly string[];
  /** What opens a line that ends a table ("Zwischensumme", "Sous-total"). */
  tableEndPatterns?: readonly string[];
  /** What opens a line that carries a table's running sum over a page break ("Übertrag"). */
  carryPatterns?: readonly string[];
  /** Column titles of an amount with tax, and of one without it ("Brutto", "Netto"). */
  grossTitlePatterns?: readonly string[];
  netTitlePatterns?: readonly string[];
  /** Column titles of a price ("Preis", "Prix"). */
  priceTitlePatterns?: readonly string[];
};
