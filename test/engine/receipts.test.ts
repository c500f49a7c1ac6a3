import { describe, expect, it } from 'vitest';
import { FieldDefinition } from '../../src/contract/index.ts';
import { INVOICE_FIELDS } from '../../src/emulator/default-config.ts';
import { groundLayout, groundScanned } from '../../src/engine/extract.ts';
import { type TextPiece, layoutPage } from '../../src/engine/layout.ts';
import { RECEIPT_FIELDS, dayOf, isRightReceipt } from '../../fixtures/lib/receipts.ts';

/**
 * Receipts read with a user's Field definition (receipts.ts, letterhead.ts): synthetic till
 * receipts laid out as OCR lays out a scan, each of the shape of a failure found on real
 * receipts. A receipt is lines of cells, top to bottom: "A ‖ B" puts B in a cell of its own at
 * the right, as a till prints a label and its amount.
 */

/** The receipts set's parser, as the eval runs it: four leaf fields, no label, no alias. */
const RECEIPT = RECEIPT_FIELDS;

function receipt(lines: string[]) {
  const pieces: TextPiece[] = [];
  for (const [i, line] of lines.entries()) {
    const [left = '', right] = line.split(' ‖ ');
    const y = 40 + 20 * i;
    if (left !== '') pieces.push({ text: left, x: 20, y, width: left.length * 6, height: 12 });
    if (right !== undefined) pieces.push({ text: right, x: 300, y, width: right.length * 6, height: 12 });
  }
  return { pages: [layoutPage(1, pieces)] };
}

const read = (lines: string[], fields = RECEIPT) => groundLayout(receipt(lines), fields);

/** A receipt's head as Malaysian shops print it: name, registration, address, ids, then the sale. */
const HEAD = [
  'KEDAI MAJU JAYA SDN BHD',
  '(123456-K)',
  'NO. 7, JALAN BUNGA RAYA 2,',
  'TAMAN SRI MUDA, 40400 SHAH ALAM',
  'TEL: 03-5555 1234',
  'GST ID: 001234567890',
  'SIMPLIFIED TAX INVOICE',
];

describe('receipts: the letterhead', () => {
  it('a field named for the issuer is the letterhead name, and address the lines under it up to the phone', () => {
    const { results, grounding } = read([...HEAD, 'Date: 23/01/2018 14:03', 'TOTAL ‖ 18.00', 'CASH ‖ 20.00']);
    expect(results.company).toBe('KEDAI MAJU JAYA SDN BHD');
    expect(results.address).toBe('NO. 7, JALAN BUNGA RAYA 2, TAMAN SRI MUDA, 40400 SHAH ALAM');
    expect(grounding.company?.page).toBe(1);
    expect(grounding.address?.box[1]).toBeLessThan(grounding.address?.box[3] ?? 0);
  });

  it('any name of the issuer reads it (merchant_name, store); a field the engine has no rule for stays null', () => {
    const fields = FieldDefinition.parse([
      { name: 'merchant_name', type: 'string' },
      { name: 'store', type: 'string' },
      { name: 'cashier_mood', type: 'string' },
    ]);
    const { results } = read([...HEAD, 'TOTAL ‖ 18.00'], fields);
    expect(results).toEqual({
      merchant_name: 'KEDAI MAJU JAYA SDN BHD',
      store: 'KEDAI MAJU JAYA SDN BHD',
      cashier_mood: null,
    });
  });

  it('a name on two lines is one name; its registration printed in it is not part of it', () => {
    const { results } = read([
      'HOME MASTER HARDWARE &',
      'ELECTRICAL',
      'NO.113G, JALAN SETIA 5,',
      '40170 BANDAR SETIA ALAM',
      'TEL: 03-3333 1111',
    ]);
    expect(results.company).toBe('HOME MASTER HARDWARE & ELECTRICAL');
    expect(
      read(['TEO HENG STATIONERY(001451637-M) & BOOKS', 'NO.53, JALAN BESAR,', '45600 BATANG']).results.company,
    ).toBe('TEO HENG STATIONERY & BOOKS');
  });

  it('stray marks above the name are skipped; a line of words that is not a name there means no letterhead', () => {
    expect(read(['tan chay yee', ...HEAD]).results.company).toBe('KEDAI MAJU JAYA SDN BHD');
    // A line with digits that is no name (no legal form ends it) and an address's line under it: not the name.
    const { results } = read([
      '99 SPEED MART (519537-X)',
      'LOT P.T. 2811, JALAN ANGSA,',
      'TAMAN BERKELEY',
      '41150 KLANG',
    ]);
    expect(results.company).toBeNull();
  });

  it('a name that ends with "S/B" (Sendirian Berhad) is the company, and a line under it is not its', () => {
    const address = ['LOT P.T. 2811, JALAN ANGSA,', 'TAMAN BERKELEY', '41150 KLANG'];
    expect(read(['99 SPEED MART S/B (519537-X)', ...address]).results.company).toBe('99 SPEED MART S/B');
    expect(read(['99 SPEED MART S/B', 'KLANG BRANCH', ...address]).results.company).toBe('99 SPEED MART S/B');
  });

  it('a legal form alone, or lines read out of order, is no name', () => {
    expect(
      read(['TRADING SDN BHD', 'ASO ELECTRICAL', 'NO 31G, JALAN SEPADU,', '40400 SHAH ALAM']).results.company,
    ).toBeNull();
  });

  it('an address of one line, or one that does not begin with a number, is not read', () => {
    expect(
      read(['KEDAI MAJU JAYA SDN BHD', '40150 SHAH ALAM, SELANGOR', 'TEL: 03-7859 9863']).results.address,
    ).toBeNull();
  });

  it('a registration or tax number printed bare above or under the address is not part of it', () => {
    const address = 'S117, SECOND FLOOR, 1, JALAN DESA TEBRAU, 81100 JOHOR BAHRU, JOHOR.';
    const under = ['YHM AEON TEBRAU CITY', 'S117, SECOND FLOOR,', '1, JALAN DESA TEBRAU,', '81100 JOHOR BAHRU, JOHOR.'];
    expect(read([...under, '002105827328', 'TAX INVOICE']).results.address).toBe(address);
    const [name, ...lines] = under;
    expect(read([name as string, '002043319', ...lines, 'GST REG NO: 001935787520']).results.address).toBe(address);
  });

  it('the built-in Invoices parser has no top-level issuer or address: nothing new is read into it', () => {
    const { results } = read([...HEAD, 'TOTAL ‖ 18.00'], INVOICE_FIELDS);
    expect(results.vendor).toMatchObject({ name: null });
  });
});

describe('receipts: the date', () => {
  it('a lone date beside a time is the date; day first where the money is ringgit', () => {
    const { results } = read([...HEAD, 'Date: 09/01/2019 8:01:11 PM', 'TOTAL RM ‖ 31.00', 'CASH ‖ 50.00']);
    expect(results.date).toBe('2019-01-09');
  });

  it('a two-digit year is read once the order is known; a day-first date printed twice is one date', () => {
    expect(read([...HEAD, '28-12-17 18:52 SHOP 2108', 'TOTAL ‖ RM 9.90']).results.date).toBe('2017-12-28');
    expect(
      read([...HEAD, 'BIZDATE: 10/02/2017', 'PRINTED: 10/02/2017 01:09:47 PM', 'TOTAL RM ‖ 7.40']).results.date,
    ).toBe('2017-02-10');
  });

  it('two different dates, or no sign of the order, give null', () => {
    expect(read([...HEAD, 'Date: 09/01/2019', 'Due: 12/01/2019', 'TOTAL RM ‖ 31.00']).results.date).toBeNull();
    expect(read(['KEDAI', '09/01/2019 8:01', 'TOTAL ‖ 31.00']).results.date).toBeNull();
  });

  it('a company form of a day-first country says the order where no currency mark is printed', () => {
    const lines = ['GERBANG ALAF RESTAURANTS SDN BHD', 'ORD #07 -REG #19- 10/03/2018 17:24:07', 'TOTAL ‖ 31.00'];
    expect(read(lines).results.date).toBe('2018-03-10');
    expect(read(['LION CITY TRADERS PTE LTD', '10/03/2018 17:24', 'TOTAL ‖ 31.00']).results.date).toBe('2018-03-10');
    expect(read(['GERBANG ALAF RESTAURANTS', '10/03/2018 17:24', 'TOTAL ‖ 31.00']).results.date).toBeNull();
  });

  it('a date that reads only month first, on a scanned page of ringgit, is a misread: null', () => {
    const lines = [...HEAD, 'Date: 01/14/2017', 'TOTAL RM ‖ 7.40'];
    expect(groundLayout(receipt(lines), RECEIPT, true).results.date).toBeNull();
    // A text layer's digits are what was printed: its labelled date stands, whatever the money
    // (an English invoice in euros writing the month first; failed before: null).
    expect(read(lines).results.date).toBe('2017-01-14');
    expect(read([...HEAD.slice(0, 1), '01/14/2017', 'TOTAL RM ‖ 7.40']).results.date).toBeNull();
  });
});

describe('receipts: the amount payable', () => {
  const GST_SUMMARY = ['GST Summary ‖ Amount (RM)', 'SR @ 6% ‖ 60.00', 'Total ‖ 60.00'];

  it('the total is never the GST summary total row', () => {
    const { results } = read([
      ...HEAD,
      'Qty ‖ 2',
      'Total Incl. GST ‖ 63.60',
      'CASH ‖ 100.00',
      'CHANGE ‖ 36.40',
      ...GST_SUMMARY,
    ]);
    expect(results.total).toBe(63.6);
  });

  it('the GST summary total row alone is no total: null', () => {
    const { results } = read([...HEAD, 'Item A ‖ 6.36', 'CASH ‖ 10.00', ...GST_SUMMARY]);
    expect(results.total).toBeNull();
  });

  it('a points balance, the cash tendered and the change are never the total', () => {
    const { results } = read([
      ...HEAD,
      'Item A ‖ 41.95',
      'TOTAL ‖ 41.95',
      'CASH ‖ 50.00',
      'CHANGE ‖ 8.05',
      'Balance ‖ 412.00',
    ]);
    expect(results.total).toBe(41.95);
    expect(read([...HEAD, 'Item A ‖ 41.95', 'CASH ‖ 50.00', 'Points Balance ‖ 412.00']).results.total).toBeNull();
  });

  it('the nett, rounded or grand total is what is paid, not the total before it', () => {
    const nett = read([...HEAD, 'Total Amount: ‖ $6.80', 'GST @6%: ‖ $0.39', 'Nett Total: ‖ $6.90', 'CASH ‖ $6.90']);
    expect(nett.results.total).toBe(6.9);
    const rounded = read([
      ...HEAD,
      'Total Sales (Inclusive GST) RM ‖ 177.22',
      'Rounding Adjustment RM ‖ -0.02',
      'CREDIT RM ‖ 177.20',
    ]);
    expect(rounded.results.total).toBeNull();
    expect(
      read([...HEAD, 'Total Incl. GST ‖ 159.02', 'Rounding ‖ -0.02', 'ROUNDED TOTAL (RM) ‖ 159.00']).results.total,
    ).toBe(159);
  });

  it('a currency cell between the label and the amount: "TOTAL ‖ RM 14.10"', () => {
    expect(
      read([...HEAD, 'Item ‖ 14.10', 'TOTAL ‖ RM 14.10', 'CASH ‖ RM 20.00', 'CHANGE ‖ RM 5.90']).results.total,
    ).toBe(14.1);
  });

  it('a total that the cash less the change, or the items above it, contradict is a misread: null', () => {
    expect(
      read([...HEAD, 'NOODLE ‖ 7.00', 'NET TOTAL ‖ 1.40', 'CASH ‖ 7.40', 'CHANGE ‖ 0.00']).results.total,
    ).toBeNull();
    expect(read([...HEAD, 'BREAD ‖ 4.55', 'ROLL ‖ 3.90', 'Total ‖ 1.25', 'CASH ‖ 20.00']).results.total).toBeNull();
  });

  it('totals that disagree (a rounding line misread): the one the cash less the change equals, even under an item priced before its saving', () => {
    const lines = (cash: string) => [
      ...HEAD,
      'F.COPY 45075',
      'pc @ 13.67 ‖ 41.07',
      'Great Saving ‖ -9.60',
      'Total RM Incl. of GST ‖ 31.87',
      'Founding Adj ‖ -0.02',
      'Total RM ‖ 31.45',
      `Cash ‖ ${cash}`,
      'CHANGE ‖ 18.55',
    ];
    expect(read(lines('-50.00')).results.total).toBe(31.45);
    expect(read(lines('50.00')).results.total).toBe(31.45);
    // The cash tells neither: the totals disagree, and neither is given.
    expect(read(lines('60.00')).results.total).toBeNull();
  });

  it('a tax code or a mark after the amount ("159.00 Fd"): the amount, placed on its own characters', () => {
    const { results, grounding } = read([
      ...HEAD,
      'TotalAmtIncl. GST@ 6% : ‖ 159.00',
      'Rounding Adjustment',
      'Total Amt Payable : ‖ 159.00 Fd',
      'Paid Amount ‖ 200.00',
      'Change : ‖ 41.00',
    ]);
    expect(results.total).toBe(159);
    // "159.00 Fd" is a cell from x 300, 6 units a character: "Fd" starts at 342.
    expect(grounding.total?.box[2]).toBeLessThan(342);
  });

  it("a column heading's value that the till's own total line contradicts is not the total: null", () => {
    const heading = [...HEAD, 'Qty ‖ Total RM', 'SHOGA YAKI SET ‖ 19.90', 'TOTAL TTT RM 24.40', 'CASH ‖ 30.40'];
    expect(read(heading).results.total).toBeNull();
    expect(read([...HEAD, 'Amount Due ‖ 19.90', 'TOTAL TTT ‖ 24.40', 'CASH ‖ 30.40']).results.total).toBeNull();
  });

  it("a total the cash less the change equals is vouched for: a scan's doubt about its digits does not null it", async () => {
    const paid = read([...HEAD, 'TOTAL ‖ 75.70', 'CASH RM ‖ 100.00', 'CHANGE RM ‖ 24.30']);
    expect(paid.results.total).toBe(75.7);
    expect(paid.vouched).toEqual(['total']);
    // A word OCR doubted over the amount: the arithmetic vouches for it (failed before: null).
    const doubtful = [{ page: 1, box: paid.grounding.total?.box ?? [0, 0, 0, 0] }];
    const scanned = async (lines: string[]) =>
      (await groundScanned(receipt(lines), { doubtful, unsure: [], notes: [] }, RECEIPT)).results.total;
    expect(await scanned([...HEAD, 'TOTAL ‖ 75.70', 'CASH RM ‖ 100.00', 'CHANGE RM ‖ 24.30'])).toBe(75.7);
    expect(await scanned([...HEAD, 'TOTAL ‖ 75.70', 'CASH RM ‖ 100.00'])).toBeNull();
    // No change printed: nothing vouches for it, and a doubtful digit nulls it as before.
    expect(read([...HEAD, 'TOTAL ‖ 75.70', 'CASH RM ‖ 100.00']).vouched).toEqual([]);
    expect(read([...HEAD, 'TOTAL ‖ 75.70', 'CASH SALES ‖ 100.00', 'CHANGE ‖ 24.30']).vouched).toEqual([]);
  });

  it('the amount accepted is the cash tendered, not the total; a currency after the change still makes a till', () => {
    // "RH": OCR's reading of "RM" (failed before: null).
    const lines = [...HEAD, 'Total amount ‖ 1.50 RH', 'Accepted total ‖ 2.00 RH', 'Change ‖ 0.50 RH'];
    expect(read(lines).results.total).toBe(1.5);
    expect(read([...HEAD, 'Total amount 1.50 RH', 'Accepted total 2.00 RH', 'Change 0.50 RH']).results.total).toBe(1.5);
  });

  it("an invoice's net total below its total is not the amount payable", () => {
    const { results } = read(['Net total ‖ 100.00', 'VAT 19% ‖ 19.00', 'Total ‖ 119.00', 'Cash ‖ 119.00']);
    expect(results.total).toBe(119);
  });
});

describe("the receipts set's scoring (fixtures/lib/receipts.ts, the set's README)", () => {
  it('a printed date is the same day, day first, with a two-digit year, a month name or ISO', () => {
    expect(['25/12/2018', '9-3-18', '12 MAR 2018', '2018-01-05', '07 Jan 18', 'no date'].map(dayOf)).toEqual([
      '2018-12-25',
      '2018-03-09',
      '2018-03-12',
      '2018-01-05',
      '2018-01-07',
      '',
    ]);
    expect(isRightReceipt('date', '09/01/2019', '2019-01-09')).toBe(true);
    expect(isRightReceipt('date', '09/01/2019', '2019-09-01')).toBe(false);
  });

  it('a total within 0.005 whatever its mark; names equal after collapsing spaces and case', () => {
    expect(isRightReceipt('total', '$8.20', 8.2)).toBe(true);
    expect(isRightReceipt('total', 'RM 9.00', 9.01)).toBe(false);
    expect(isRightReceipt('company', 'ABC  HO TRADING', 'abc ho trading')).toBe(true);
    expect(isRightReceipt('address', 'NO.53,JALAN BESAR', 'NO.53, JALAN BESAR')).toBe(false);
  });
});
