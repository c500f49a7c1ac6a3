import type { Vocabulary } from './types.ts';

export const FR: Vocabulary = {
  invoice_number: {
    labels: [
      'Numéro de facture',
      'N° de facture',
      'Facture N°',
      'Facture No',
      'Facture Numéro',
      'N° facture',
      'Avoir N°',
      "Numéro d'avoir",
      'Référence facture',
    ],
  },
  invoice_date: {
    labels: [
      'Date de facture',
      'Date de la facture',
      'Date facture',
      "Date d'émission",
      "Date d'avoir",
      'Facture du',
      'Date de facturation',
    ],
    fallback: ['Date'],
  },
  due_date: { labels: ["Date d'échéance", 'Échéance', 'Date limite de paiement', 'À payer avant le'] },
  delivery_date: { labels: ['Date de livraison', 'Livraison le', 'Date de prestation'] },
  order_date: { labels: ['Date de commande'] },
  total: {
    labels: ['Total TTC', 'Montant TTC', 'Total facture', 'Montant total', 'Total à payer TTC', 'Montant total TTC'],
    fallback: ['Net à payer', 'Solde à payer', 'Reste à payer', 'Montant à payer', 'Total à payer'],
  },
  amount_due: { labels: ['Net à payer', 'Solde à payer', 'Reste à payer', 'Montant à payer', 'Total à payer'] },
  subtotal: { labels: ['Total HT', 'Montant HT', 'Sous-total', 'Total hors taxes', 'Prix HT'] },
  tax: { labels: ['TVA', 'Montant TVA', 'Total TVA', 'Total taxes', 'Total des taxes', 'Montant total TVA', 'Taxes'] },
  paid_amount: { labels: ['Acompte', 'Déjà payé', 'Montant payé', 'Règlement'] },
  currency: { labels: ['Devise', 'Monnaie'] },
  purchase_order: {
    labels: ['Bon de commande', 'N° de commande', 'Numéro de commande', 'Votre référence', 'Votre commande'],
  },
  customer_number: { labels: ['Numéro client', 'N° client', 'Code client', 'Réf client'] },
  vat_id: {
    labels: [
      'N° TVA',
      'Numéro de TVA',
      'N° TVA intracommunautaire',
      'TVA intracommunautaire',
      'N° TVA client',
      'SIRET',
      'SIREN',
    ],
  },
  iban: { labels: ['IBAN'] },
  seller: { labels: ['Vendeur', 'Fournisseur', 'Émetteur'] },
  buyer: {
    labels: [
      'Acheteur',
      'Client',
      'Facturé à',
      'Adresse de facturation',
      'Adresse du client',
      'Adresse client',
      'Destinataire de la facture',
    ],
  },
  ship_to: { labels: ['Adresse de livraison', 'Livré à', 'Livrer à'] },
};
