import type { Vocabulary } from './types.ts';

export const ES: Vocabulary = {
  invoice_number: {
    labels: [
      'Número de factura',
      'N° de factura',
      'Nº de factura',
      'Factura N°',
      'Factura Nº',
      'Factura No',
      'Núm factura',
      'Nº factura',
    ],
  },
  invoice_date: {
    labels: ['Fecha de factura', 'Fecha factura', 'Fecha de emisión', 'Fecha de expedición'],
    fallback: ['Fecha'],
  },
  due_date: { labels: ['Fecha de vencimiento', 'Vencimiento', 'Fecha límite de pago'] },
  delivery_date: { labels: ['Fecha de entrega', 'Fecha de servicio'] },
  order_date: { labels: ['Fecha de pedido'] },
  total: {
    labels: [
      'Total factura',
      'Importe total',
      'Total a pagar',
      'Total con IVA',
      'Total IVA incluido',
      'Importe total factura',
    ],
    fallback: ['Importe a pagar', 'Saldo pendiente', 'Pendiente de pago'],
  },
  amount_due: { labels: ['Importe a pagar', 'Saldo pendiente', 'Pendiente de pago', 'Total a pagar'] },
  subtotal: { labels: ['Subtotal', 'Base imponible', 'Importe neto', 'Total sin IVA'] },
  tax: { labels: ['IVA', 'Cuota IVA', 'Importe IVA', 'Total IVA', 'Impuestos'] },
  paid_amount: { labels: ['Pagado', 'Anticipo', 'Importe pagado'] },
  currency: { labels: ['Moneda', 'Divisa'] },
  purchase_order: { labels: ['Número de pedido', 'N° de pedido', 'Nº de pedido', 'Orden de compra', 'Su referencia'] },
  customer_number: { labels: ['Número de cliente', 'Nº de cliente', 'Código de cliente'] },
  vat_id: { labels: ['NIF', 'CIF', 'NIF/CIF', 'N° IVA'] },
  iban: { labels: ['IBAN'] },
  seller: { labels: ['Vendedor', 'Proveedor', 'Emisor'] },
  buyer: { labels: ['Comprador', 'Facturar a', 'Dirección de facturación'] },
  ship_to: { labels: ['Dirección de entrega', 'Enviar a'] },
};
