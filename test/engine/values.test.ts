import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDate } from '../../src/engine/dates.ts';
import {
  MAY_HOLD_MARK,
  MONEY_MARKS,
  currenciesOfAmounts,
  parseBoolean,
  parseCurrency,
  parseDecimal,
  parseEmail,
  parseInteger,
  parsePhone,
  parseString,
} from '../../src/engine/values.ts';

describe('engine values', () => {
  it('engine: the quick test for a money mark passes every mark, so no amount with a mark is skipped', () => {
    expect(MONEY_MARKS.length).toBeGreaterThan(30);
    for (const mark of MONEY_MARKS) {
      expect(MAY_HOLD_MARK.test(mark), mark).toBe(true);
      expect(currenciesOfAmounts(`Total 12.50 ${mark}`).length, mark).toBe(1);
      expect(currenciesOfAmounts(`${mark} 12.50`).length, mark).toBe(1);
    }
    // Property: any text that holds a mark anywhere passes the quick test (it skips only texts with none).
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...MONEY_MARKS), fc.string(), (before, mark, after) => {
        expect(MAY_HOLD_MARK.test(before + mark + after)).toBe(true);
      }),
    );
  });

  it('engine: reads a US decimal with thousands and a dollar sign', () => {
    expect(parseDecimal('1,234.50')).toBe(1234.5);
    expect(parseDecimal('$1,234.50')).toBe(1234.5);
    expect(parseDecimal('USD 1,234.50')).toBe(1234.5);
    expect(parseDecimal('1234.5')).toBe(1234.5);
  });

  it('engine: reads a European decimal', () => {
    expect(parseDecimal('1.234,50 EUR')).toBe(1234.5);
    expect(parseDecimal('1.234,50 €')).toBe(1234.5);
    expect(parseDecimal('€ 12,5')).toBe(12.5);
    expect(parseDecimal('1 234,56 €')).toBe(1234.56);
    expect(parseDecimal("1'234.50 CHF")).toBe(1234.5);
  });

  it('engine: reads negative amounts in parentheses and with a minus', () => {
    expect(parseDecimal('(12.00)')).toBe(-12);
    expect(parseDecimal('-12.00')).toBe(-12);
    expect(parseDecimal('−12.00')).toBe(-12);
    expect(parseDecimal('$-12.00')).toBe(-12);
    expect(parseDecimal('($1,000.00)')).toBe(-1000);
  });

  it('engine: refuses a decimal it cannot be sure of', () => {
    expect(parseDecimal('1,234')).toBeNull(); // a thousand, or one point two?
    expect(parseDecimal('1.234')).toBeNull();
    expect(parseDecimal('12 items')).toBeNull();
    expect(parseDecimal('1,23,4.00')).toBeNull();
    expect(parseDecimal('')).toBeNull();
    expect(parseDecimal('N/A')).toBeNull();
    expect(parseDecimal('1.234.567,8.9')).toBeNull();
  });

  it("engine: settles '1,234' with the document's own decimal mark", () => {
    expect(parseDecimal('1,234', { decimalMark: '.' })).toBe(1234);
    expect(parseDecimal('1,234', { decimalMark: ',' })).toBe(1.234);
    expect(parseDecimal('1.234', { decimalMark: ',' })).toBe(1234);
  });

  it('engine: reads any US or European rendering of a cent amount back exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: -99_999_999_99, max: 99_999_999_99 }), (cents) => {
        const value = cents / 100;
        const abs = Math.abs(cents);
        const int = Math.floor(abs / 100).toString();
        const frac = String(abs % 100).padStart(2, '0');
        const group = (sep: string) => int.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
        const sign = cents < 0 ? '-' : '';
        expect(parseDecimal(`${sign}${group(',')}.${frac}`)).toBe(value);
        expect(parseDecimal(`${sign}${group('.')},${frac} EUR`)).toBe(value);
        expect(parseDecimal(cents < 0 ? `(${group(',')}.${frac})` : `$${group(',')}.${frac}`)).toBe(value);
      }),
    );
  });

  it('engine: reads integers and refuses fractions', () => {
    expect(parseInteger('42')).toBe(42);
    expect(parseInteger('12.00')).toBe(12);
    expect(parseInteger('12.5')).toBeNull();
    expect(parseInteger('1,200', { decimalMark: '.' })).toBe(1200);
  });

  it('engine: reads dates into ISO', () => {
    expect(parseDate('2024-03-15')).toBe('2024-03-15');
    expect(parseDate('15/03/2024')).toBe('2024-03-15');
    expect(parseDate('03/15/2024')).toBe('2024-03-15');
    expect(parseDate('15.03.2024')).toBe('2024-03-15');
    expect(parseDate('March 4, 2025')).toBe('2025-03-04');
    expect(parseDate('Mar. 4 2025')).toBe('2025-03-04');
    expect(parseDate('4 Mar 2025')).toBe('2025-03-04');
    expect(parseDate('4th March 2025')).toBe('2025-03-04');
    expect(parseDate('7. Mai 2014')).toBe('2014-05-07');
    expect(parseDate('15 mars 2024')).toBe('2024-03-15');
    expect(parseDate('15 de marzo de 2024')).toBe('2024-03-15');
    expect(parseDate('1. März 2024')).toBe('2024-03-01');
    expect(parseDate('Tuesday, March 4, 2025')).toBe('2025-03-04');
  });

  it('engine: refuses ambiguous and impossible dates', () => {
    expect(parseDate('03/04/2024')).toBeNull();
    expect(parseDate('03/04/24')).toBeNull();
    expect(parseDate('31/02/2024')).toBeNull();
    expect(parseDate('2023-02-29')).toBeNull();
    expect(parseDate('upon receipt')).toBeNull();
    expect(parseDate('4 Foo 2025')).toBeNull();
  });

  it("engine: settles '03/04/2024' with the document's own date order", () => {
    expect(parseDate('03/04/2024', 'dmy')).toBe('2024-04-03');
    expect(parseDate('03/04/2024', 'mdy')).toBe('2024-03-04');
    expect(parseDate('15/03/2024', 'mdy')).toBe('2024-03-15');
  });

  it('engine: reads booleans and boxes', () => {
    for (const t of ['yes', 'Yes', 'TRUE', '☑', '☒', '✓', '✔', '[x]', 'ja']) expect(parseBoolean(t)).toBe(true);
    for (const t of ['no', 'False', '☐', '[ ]', 'nein']) expect(parseBoolean(t)).toBe(false);
    expect(parseBoolean('maybe')).toBeNull();
    expect(parseBoolean('paid in full')).toBeNull();
  });

  it('engine: reads email, phone, currency and string', () => {
    expect(parseEmail('Billing@ACME.Example')).toBe('Billing@acme.example');
    expect(parseEmail('not an email')).toBeNull();
    expect(parsePhone('+49 30 1234 5678')).toBe('+49 30 1234 5678');
    expect(parsePhone('(555) 123-4567')).toBe('5551234567');
    expect(parsePhone('12')).toBeNull();
    expect(parsePhone('2024-03-15x')).toBeNull();
    expect(parseCurrency('EUR')).toBe('EUR');
    expect(parseCurrency('eur')).toBe('EUR');
    expect(parseCurrency('€')).toBe('EUR');
    expect(parseCurrency('£')).toBe('GBP');
    expect(parseCurrency('US$')).toBe('USD');
    expect(parseCurrency('$')).toBeNull(); // USD, CAD, AUD, MXN...: not one currency
    expect(parseCurrency('¥')).toBeNull();
    expect(parseCurrency('XYZ')).toBeNull();
    expect(parseString('  Acme   GmbH ')).toBe('Acme GmbH');
    expect(parseString('--')).toBeNull();
  });

  it('engine: a currency by its name, or glossed by its code or symbol, when both agree', () => {
    expect(parseCurrency('EURO (EUR)')).toBe('EUR');
    expect(parseCurrency('Euro')).toBe('EUR');
    expect(parseCurrency('EUR (€)')).toBe('EUR');
    expect(parseCurrency('Schweizer Franken')).toBe('CHF');
    expect(parseCurrency('EURO (USD)')).toBeNull();
    expect(parseCurrency('Dollar ($)')).toBeNull();
    expect(parseCurrency('RM')).toBe('MYR');
  });

  it('engine: opening hours and times of day are no amounts: "Mo.-Fr. 08.30 - 12.30 Uhr"', () => {
    expect(currenciesOfAmounts('Mo.-Fr. 08.30 - 12.30 Uhr')).toEqual([]);
    expect(currenciesOfAmounts('Sprechzeiten Mo.-Fr. 8.30 bis 17.00')).toEqual([]);
    expect(currenciesOfAmounts('Fr. 08.30 Uhr')).toEqual([]);
    expect(currenciesOfAmounts('Total Fr. 108.30')).toEqual(['CHF']);
    expect(currenciesOfAmounts('EUR 12.30 - Rabatt')).toEqual(['EUR']);
  });
});
