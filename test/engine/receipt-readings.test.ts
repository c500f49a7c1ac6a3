import { describe, expect, it } from 'vitest';
import { groundImage, groundLayout, groundScanned } from '../../src/engine/extract.ts';
import { type TextPiece, layoutPage } from '../../src/engine/layout.ts';
import type { OcrLayout } from '../../src/engine/ocr.ts';
import { type Scan, isClosedListWord } from '../../src/engine/scan.ts';
import type { Place } from '../../src/engine/types.ts';
import { RECEIPT_FIELDS } from '../../fixtures/lib/receipts.ts';

/**
 * Receipts as OCR reads them (receipts.ts, letterhead.ts, rereading.ts): synthetic pages built
 * word by word, so that a test can say which word OCR doubted, each of the shape of a value
 * found on real receipts. A line is words at 6 units a character, one space apart; "‖" starts a
 * cell at the right, as a till prints a label and its amount.
 */

type Word = { text: string; place: Place };

function page(lines: Array<string | { text: string; y: number; height: number }>) {
  const pieces: TextPiece[] = [];
  const words: Word[] = [];
  for (const [i, line] of lines.entries()) {
    const { text, y, height } = typeof line === 'string' ? { text: line, y: 40 + 20 * i, height: 12 } : line;
    const [left = '', right] = text.split(' ‖ ');
    for (const [part, from] of [
      [left, 20],
      [right, 300],
    ] as const) {
      let x = from;
      for (const word of part?.split(' ') ?? []) {
        if (word === '') continue;
        const width = word.length * 0.5 * height;
        pieces.push({ text: word, x, y, width, height });
        // A mark with no letter or digit (";", ".") sits on the baseline, as OCR boxes it.
        const top = /[\p{L}\d]/u.test(word) ? y - 0.7 * height : y - 0.15 * height;
        words.push({ text: word, place: { page: 1, box: [x, top, x + width, y] } });
        x += width + 0.5 * height;
      }
    }
  }
  return { layout: { pages: [layoutPage(1, pieces)] }, words };
}

/** The results of a page whose words `doubted` OCR read with low confidence. */
async function scanned(lines: Parameters<typeof page>[0], doubted: (w: Word) => boolean) {
  const { layout, words } = page(lines);
  const doubtful = words.filter(doubted).map((w) => w.place);
  return (await groundScanned(layout, { doubtful, unsure: doubtful, notes: [] }, RECEIPT_FIELDS)).results;
}

const HEAD = [
  'KEDAI MAJU JAYA SDN BHD',
  '(123456-K)',
  'NO. 7, JALAN BUNGA RAYA 2,',
  'TAMAN SRI MUDA, 40400 SHAH ALAM',
  'TEL: 03-5555 1234',
];

describe('receipts read by OCR: a doubt is about the words of the value only', () => {
  it("a date's label or a mark on the line above read with doubt does not null the date", async () => {
    // Failed before: null (the date's place was its whole cell, label and time included).
    // OCR's line height holds the line's spacing: 31 for lines 24 apart.
    const lines = [
      ...HEAD,
      { text: 'Cash Bill ; 01143008', y: 259, height: 29 },
      { text: 'Date: 09/01/2019 8:01:11 PM', y: 283, height: 31 },
      { text: 'TOTAL ‖ 31.00', y: 320, height: 31 },
      { text: 'CASH ‖ 50.00', y: 350, height: 31 },
    ];
    expect((await scanned(lines, (w) => w.text === 'Date:' || w.text === ';')).date).toBe('2019-01-09');
    // A doubt about the date's own digits still nulls it.
    expect((await scanned(lines, (w) => w.text === '09/01/2019')).date).toBeNull();
  });

  it('a total OCR printed as "RM 65. 20": a doubt about the currency beside it does not null it', async () => {
    // Failed before: null (the amount was not found in its cell, and the whole cell was checked).
    const lines = [...HEAD, 'Sub Total ‖ RM 65. 20', 'TOTAL ‖ RM 65. 20', 'CASH ‖ RM 70.00'];
    expect((await scanned(lines, (w) => w.text === 'RM')).total).toBe(65.2);
    expect((await scanned(lines, (w) => w.text === '20')).total).toBeNull();
  });

  it('a legal form or a month spelt exactly is no guess; a misread of one is no word of the list', () => {
    // Failed before (no such rule): "BHD" at 87 nulled "UNIHAKKA INTERNATIONAL SDN BHD", "Apr" at 68 "09 Apr 2018".
    for (const word of ['SDN', 'BHD', 'Bhd.', '(M)', 'CO.', 'LTD', 'MAR', 'Apr', 'December', 'Sept.'])
      expect(isClosedListWord(word)).toBe(true);
    for (const word of ['HD.', '3HD', 'SDM', 'CONFECTIONERY', '(M', 'Apt', 'MAR2018', 'Marc'])
      expect(isClosedListWord(word)).toBe(false);
  });
});

describe('receipts: the letterhead name', () => {
  const read = (lines: Parameters<typeof page>[0]) => groundLayout(page(lines).layout, RECEIPT_FIELDS).results;

  it('a second line of a name that neither runs on nor ends the name is maybe a place: no name', () => {
    // Failed before: "RELAIS TOTAL OULMES AUTOROUTE RABAT MEKNES" (the truth is the first line).
    expect(
      read(['RELAIS TOTAL OULMES', 'AUTOROUTE RABAT MEKNES', '15000 KHEMISSET', 'Tel. : 05.22.95.66.66']).company,
    ).toBeNull();
    expect(
      read(['HOME MASTER HARDWARE &', 'ELECTRICAL', 'NO.113G, JALAN SETIA 5,', '40170 BANDAR SETIA ALAM']).company,
    ).toBe('HOME MASTER HARDWARE & ELECTRICAL');
  });

  it('a name in large type over small print close under it is read (no overlap)', () => {
    // Failed before: null (the small line's baseline is within half the large type's height).
    const results = read([
      { text: 'POPULAR BOOK', y: 60, height: 40 },
      { text: 'CO. (M) SDN BHD', y: 100, height: 40 },
      { text: '(Co. No. 113825-W)', y: 118, height: 14 },
      { text: 'No 8, Jalan 7/118B, Desa Tun Razak', y: 136, height: 14 },
      { text: '56000 Kuala Lumpur, Malaysia', y: 152, height: 14 },
      { text: 'TEL: 03-4141 2222', y: 168, height: 14 },
    ]);
    expect(results.company).toBe('POPULAR BOOK CO. (M) SDN BHD');
  });
});

describe('receipts: the letterhead name, its own words', () => {
  const SHOP = [
    'NO. 31G, JALAN SETIA INDAH,',
    '40170 SETIA ALAM',
    'Tel: +603-3362 4137',
    'TOTAL ‖ 9.90',
    'CASH ‖ 10.00',
  ];

  it('a name that ends with its legal form may hold a number; a doubt about its registration number is not its own', async () => {
    // Failed before: null (a digit in the name's line, and the doubted registration number in its place).
    const lines = [
      '99 SPEED MART S/B (519537-X)',
      'LOT P.T. 2811, JALAN ANGSA,',
      '41150 KLANG, SELANGOR',
      ...SHOP.slice(2),
    ];
    expect((await scanned(lines, (w) => w.text === '(519537-X)')).company).toBe('99 SPEED MART S/B');
    expect(isClosedListWord('S/B')).toBe(true);
    // A doubt about a word of the name still nulls it; a line with a number and no legal form is no name.
    expect((await scanned(lines, (w) => w.text === 'MART')).company).toBeNull();
    expect((await scanned(['99 SPEED MART', ...lines.slice(1)], () => false)).company).toBeNull();
  });

  it('a registration number printed without its hyphen, "(139386 X)", is not part of the name', async () => {
    // Failed before: null (its digits made the line no name).
    const lines = ['GARDENIA BAKERIES (KL) SDN BHD (139386 X)', ...SHOP];
    expect((await scanned(lines, () => false)).company).toBe('GARDENIA BAKERIES (KL) SDN BHD');
  });

  it("a stray mark beside the name is not part of it, nor OCR's doubt about it the name's", async () => {
    // Failed before: null (the mark's comma made the line no name).
    const lines = [', ‖ Yam Fresh', ...SHOP];
    expect(await scanned(lines, (w) => w.text === ',')).toMatchObject({ company: 'Yam Fresh' });
  });

  it('lines that overlap under the letterhead leave its name and address read; lines that overlap in it do not', async () => {
    // Failed before: null and null (any overlap in the eleven lines from the name nulled the letterhead).
    const lines = [
      { text: 'SANYU STATIONERY SHOP', y: 40, height: 12 },
      { text: 'NO. 31G, JALAN SETIA INDAH,', y: 60, height: 12 },
      { text: '40170 SETIA ALAM', y: 80, height: 12 },
      { text: 'Tel: +603-3362 4137', y: 100, height: 12 },
      { text: 'GST ID No: 001531760640', y: 120, height: 12 },
      { text: 'TAX INVOICE', y: 125, height: 12 },
    ];
    const results = await scanned(lines, () => false);
    expect(results.company).toBe('SANYU STATIONERY SHOP');
    expect(results.address).toBe('NO. 31G, JALAN SETIA INDAH, 40170 SETIA ALAM');
    // The address's own lines out of order ("12, Jalan" under its rest): the name stands, the address is null.
    const skewed = [lines[0], lines[1], { ...lines[2], y: 64 }, ...lines.slice(3)] as typeof lines;
    expect(await scanned(skewed, () => false)).toMatchObject({ company: 'SANYU STATIONERY SHOP', address: null });
  });
});

describe('receipts: the letterhead address', () => {
  it('labelled registration and tax numbers between the name and the address are skipped, as a bare one is', async () => {
    // Failed before: null (the labelled number was taken for the line that ends the address).
    const lines = [
      'KEDAI MAJU JAYA SDN BHD',
      '(CO.REG :860671-D)*',
      '(GST Reg No. 001492992000)',
      'NO. 7, JALAN BUNGA RAYA 2,',
      'TAMAN SRI MUDA, 40400 SHAH ALAM',
      'TEL: 03-5555 1234',
      'TOTAL ‖ 9.90',
      'CASH ‖ 10.00',
    ];
    expect((await scanned(lines, () => false)).address).toBe(
      'NO. 7, JALAN BUNGA RAYA 2, TAMAN SRI MUDA, 40400 SHAH ALAM',
    );
    // The address's first line misread without its number ("No.l,") is not skipped as a former name: null.
    const misread = [...lines.slice(0, 3), 'No.l,', 'JLN PUTERI 1/6,', '47100 PUCHONG, SELANGOR', ...lines.slice(5)];
    expect((await scanned(misread, () => false)).address).toBeNull();
    // A phone under the name is no id: what follows it is not read as the address.
    const phoned = ['KEDAI MAJU JAYA SDN BHD', 'TEL: 03-5555 1234', ...lines.slice(3, 5), 'GST No: 001492992000'];
    expect((await scanned(phoned, () => false)).address).toBeNull();
  });
});

describe('receipts: a skewed letterhead', () => {
  /** Words placed by hand: [text, x, baseline], 12 high, 6 units a character. */
  const laid = (words: Array<[string, number, number]>) =>
    groundLayout(
      {
        pages: [
          layoutPage(
            1,
            words.map(([text, x, y]) => ({ text, x, y, width: 6 * text.length, height: 12 })),
          ),
        ],
      },
      RECEIPT_FIELDS,
    ).results;
  const UNDER: Array<[string, number, number]> = [
    ['NO.', 20, 60],
    ['7,', 44, 60],
    ['JALAN', 62, 60],
    ['BESAR,', 98, 60],
    ['40400', 20, 80],
    ['SHAH', 56, 80],
    ['ALAM', 86, 80],
    ['TEL:', 20, 100],
    ['03-5555', 50, 100],
    ['1234', 98, 100],
  ];

  it('a name OCR read as two overlapping lines side by side is one name, read left to right', () => {
    // Failed before: null (the overlap nulled the letterhead).
    const name: Array<[string, number, number]> = [
      ['UNIHAKKA', 20, 40],
      ['INTERNATIONAL', 74, 35],
      ['SDN', 158, 34],
      ['BHD', 182, 34],
    ];
    expect(laid([...name, ...UNDER]).company).toBe('UNIHAKKA INTERNATIONAL SDN BHD');
    // Overlapping lines one above the other (not side by side) are a page OCR did not read in order: null.
    const stacked: Array<[string, number, number]> = [
      ['INTERNATIONAL', 20, 35],
      ['SDN', 104, 35],
      ['BHD', 128, 35],
      ['UNIHAKKA', 20, 40],
    ];
    expect(laid([...stacked, ...UNDER]).company).toBeNull();
  });
});

describe('receipts: the amount payable', () => {
  it('a "Total RM" column heading with the first item under it, and no total line read: null', () => {
    // Failed before: 19.9 (OCR's second reading split the "TOTAL : RM 24.40" line).
    const { results } = groundLayout(
      page([...HEAD, 'Qty ‖ Total RM', 'SHOGA YAKI SET ‖ 19.90', 'SIDE DISH ‖ 4.50', 'CASH ‖ 30.40']).layout,
      RECEIPT_FIELDS,
    );
    expect(results.total).toBeNull();
  });
});

describe('receipts: a second reading fills what the first lacks (extract.ts groundImage)', () => {
  /** Readings of one image by layout; the calls made, in order. */
  function readings(by: Partial<Record<OcrLayout, { lines: string[]; doubted?: string[] }>>) {
    const calls: OcrLayout[] = [];
    const read = async (_kind: string, _bytes: Uint8Array, layout: OcrLayout): Promise<Scan> => {
      calls.push(layout);
      const { lines = [], doubted = [] } = by[layout] ?? {};
      const { layout: laid, words } = page(lines);
      const doubtful = words.filter((w) => doubted.includes(w.text)).map((w) => w.place);
      return { pages: laid.pages, doubtful, unsure: doubtful, notes: [] };
    };
    return { calls, read };
  }
  const bytes = new Uint8Array(0);

  it('an amount column the first reading dropped is taken from the second; a value the first read is kept', async () => {
    const { calls, read } = readings({
      auto: { lines: [...HEAD, 'Date: 09/01/2019', 'Total Amount:', 'Cash Received', 'Change :'] },
      block: {
        lines: [...HEAD, 'Date: 10/01/2019', 'Total Amount: ‖ 31.00', 'Cash Received ‖ 101.00', 'Change : ‖ 70.00'],
      },
    });
    const { results } = await groundImage('jpeg', bytes, RECEIPT_FIELDS, read);
    expect(calls).toEqual(['auto', 'block']);
    expect(results.total).toBe(31);
    expect(results.date).toBe('2019-01-09');
  });

  it('a first reading that lacks nothing is the only one', async () => {
    const { calls, read } = readings({
      auto: { lines: [...HEAD, 'Date: 09/01/2019', 'TOTAL ‖ 31.00', 'CASH ‖ 50.00', 'CHANGE ‖ 19.00'] },
    });
    const { results } = await groundImage('jpeg', bytes, RECEIPT_FIELDS, read);
    expect(calls).toEqual(['auto']);
    expect(results.total).toBe(31);
  });

  it('a date the first reading doubted is not taken from the second, which misreads it the same way', async () => {
    const lines = [...HEAD, 'Date: 04-04-2016', 'TOTAL ‖ 24.40', 'CASH ‖ 30.40', 'CHANGE ‖ 6.00'];
    const dropped = [...HEAD, 'Date: 04-04-2016', 'TOTAL', 'CASH', 'CHANGE'];
    const { calls, read } = readings({ auto: { lines: dropped, doubted: ['04-04-2016'] }, block: { lines } });
    const { results } = await groundImage('jpeg', bytes, RECEIPT_FIELDS, read);
    expect(calls).toEqual(['auto', 'block']);
    expect(results.date).toBeNull();
    expect(results.total).toBe(24.4);
  });
});
