import type { Vocabulary } from './types.ts';

export const DE: Vocabulary = {
  invoice_number: { labels: ['Rechnungsnummer', 'Rechnungs-Nr', 'Rechnung Nr', 'Rechnung #', 'Rechnungsnr', 'Handelsrechnung Nr', 'Teilrechnung Nr', 'Schlussrechnung Nr', 'Gutschrift Nr', 'Gutschriftsnummer', 'Rechnungskorrektur Nr', '*rechnung Nr', '*rechnung Nummer', '*gutschrift Nr', 'Belegnummer', 'Beleg-Nr', 'Beleg Nr'] },
  invoice_date: { labels: ['Rechnungsdatum', 'Rechnungs-Datum', 'Belegdatum', 'Beleg-Datum', 'Ausstellungsdatum', 'Gutschriftsdatum', 'Datum der Rechnung'], fallback: ['Datum'] },
  due_date: { labels: ['Fälligkeitsdatum', 'Fälligkeitstag', 'Fällig am', 'Fälligkeit', 'Zahlbar bis', 'Zahlungsziel'] },
  delivery_date: { labels: ['Lieferdatum', 'Leistungsdatum', 'Leistungs-Datum', 'Liefer- und Leistungsdatum', 'Liefer- bzw. Leistungsdatum', 'Lieferschein-Datum', 'Leistungszeitraum'] },
  order_date: { labels: ['Bestelldatum', 'Bestell-Datum', 'Auftragsdatum', 'Auftrag-Datum'] },
  total: {
    labels: ['Gesamtbetrag', 'Gesamtsumme', 'Rechnungsbetrag', 'Rechnungssumme Brutto', 'Rechnungssumme', 'Bruttobetrag', 'Bruttosumme', 'Summe Brutto', 'Gesamt Brutto', 'Summe inkl USt', 'Summe inkl MwSt', 'Gesamt inkl USt', 'Gesamt inkl MwSt', 'Endbetrag', 'Endsumme', 'Rechnungsbeitrag', 'Gesamt', 'Summe'],
    fallback: ['Zahlbetrag', 'Zu zahlen', 'Zu zahlender Betrag', 'Zu zahlender Beitrag', 'Offener Betrag', 'Restbetrag'],
  },
  amount_due: { labels: ['Zahlbetrag', 'Zu zahlen', 'Zu zahlender Betrag', 'Zu zahlender Beitrag', 'Offener Betrag', 'Restbetrag'] },
  subtotal: { labels: ['Zwischensumme', 'Nettobetrag', 'Summe Netto', 'Gesamt Netto', 'Nettosumme', 'Rechnungssumme Netto', 'Rechnungssumme ohne USt', 'Warenwert', 'Positionssumme', 'Netto'] },
  tax: { labels: ['Umsatzsteuer', 'Mehrwertsteuer', 'MwSt', 'USt', 'Steuerbetrag', 'MwSt-Betrag', 'USt-Betrag', 'Zuzügl USt', 'zzgl USt', 'zzgl MwSt'] },
  paid_amount: { labels: ['Erhaltene Anzahlungen', 'Anzahlung', 'Bereits bezahlt', 'Geleistete Anzahlung'] },
  currency: { labels: ['Währung'] },
  purchase_order: { labels: ['Bestellnummer', 'Bestell-Nr', 'Ihre Bestellung', 'Auftragsnummer', 'Auftrag-Nr'] },
  customer_number: { labels: ['Kundennummer', 'Kunden-Nr', 'Kundennr', 'Ihre Nummer'] },
  vat_id: { labels: ['USt-IdNr', 'USt-Id-Nr', 'USt-ID', 'Umsatzsteuer-ID', 'Steuernummer', 'Steuernr', 'USt-Identnr'] },
  iban: { labels: ['IBAN', 'IBAN-Nr'] },
};
