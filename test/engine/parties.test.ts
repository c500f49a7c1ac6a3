import { describe, expect, it } from 'vitest';
import { Sheet } from '../../fixtures/lib/pdf.ts';
import { readSheet } from './read-sheet.ts';

/**
 * The parties as a reader finds them: under a heading past the key lines and blank gaps that
 * come before the name, never a contact person, a country code or the addressee's VAT id.
 * Where the name would be a guess (another address on the page, the invoice's details beside
 * the addressee's block, a remark under an empty heading), null. Each page is drawn here in
 * the shape the failure had (never a copy of a corpus file).
 */

const read = async (sheet: Sheet) =>
  (await readSheet(sheet)) as { vendor: Record<string, unknown>; bill_to: Record<string, unknown> };

describe('parties: the name under its heading', () => {
  it('engine: a country code on the line under a labelled name is not part of the name', async () => {
    const s = new Sheet();
    s.text(65, 64, 'Handelsrechnung Nr. 4711 vom 05.03.2020', { size: 14 });
    s.text(70, 152, 'Verkäufer');
    s.text(70, 169, 'Name:').text(261, 169, 'Nordlicht Handels GmbH');
    s.text(261, 187, 'DE');
    s.text(70, 205, 'Steuernummer:').text(261, 205, '201/113/40209');
    // The page's other lines stand wider apart than its party's lines (its pitch is theirs).
    for (let k = 0; k < 8; k++) s.text(70, 300 + 24 * k, `Bemerkung ${k + 1}`);
    const { vendor } = await read(s);
    expect(vendor.name).toBe('Nordlicht Handels GmbH');
  });

  it('engine: a blank gap and key lines (numbers, GLN over two lines, GTIN, customer no.) before the name are passed over', async () => {
    const s = new Sheet();
    s.text(60, 50, 'Rechnung 2024-118', { size: 14 });
    s.text(60, 120, 'Verkäufer:');
    // A blank gap, then key lines, then the name and the address.
    s.lines(60, 165, 14, [
      'Nummer : 549910',
      'Globale Nummer: 4000001123452 (GTIN)',
      'Bergblick Werkzeuge GmbH',
      'Talweg 4',
      '87700 Memmingen',
    ]);
    s.text(320, 120, 'Rechnungsempfänger');
    s.lines(320, 165, 14, ['GLN', '4304171000002', 'Kunden-Nr. 77812', 'Seeufer Gastro KG', 'Uferstraße 9']);
    const results = await read(s);
    expect(results.vendor.name).toBe('Bergblick Werkzeuge GmbH');
    expect(results.bill_to.name).toBe('Seeufer Gastro KG');
    // A number's scheme on the line under it, a key over its number.
    const t = new Sheet();
    t.text(60, 120, 'Rechnungsempfänger');
    t.lines(60, 136, 14, ['Globale Nummer: 4000001123452', '(GTIN)', 'Kunden-Nr.', '77812', 'Seeufer Gastro KG']);
    t.lines(60, 206, 14, ['Uferstraße 9', '88131 Lindau']);
    expect((await read(t)).bill_to.name).toBe('Seeufer Gastro KG');
  });

  it("engine: a contact person above the buyer's name is not the buyer", async () => {
    const s = new Sheet();
    s.text(300, 50, 'FACTURE N° : FA-0042');
    s.text(300, 75, 'Adresse du client');
    s.lines(307, 86, 9, ['Contact Achats, Service comptable', 'BOULANGERIE DU PORT', '12 quai Est', '29200 Brest, FR']);
    s.text(300, 140, 'CLIENT :');
    const results = await read(s);
    expect(results.bill_to.name).toBe('BOULANGERIE DU PORT');
    // A block whose only lines are a contact and keys names nobody.
    const t = new Sheet();
    t.text(300, 75, 'Adresse du client');
    t.lines(307, 86, 9, ['Contact: Mme Leroy', 'N° client : 0215']);
    expect((await read(t)).bill_to.name).toBeNull();
  });

  it('engine: past a blank gap, a line alone under an empty heading is no name', async () => {
    const s = new Sheet();
    s.text(60, 120, 'Bill To:');
    s.text(60, 170, 'Thank you for your business');
    expect((await read(s)).bill_to.name).toBeNull();
  });

  it('engine: a salutation or a lone key under the heading is no name', async () => {
    const s = new Sheet();
    s.text(60, 120, 'Rechnungsempfänger');
    s.lines(60, 136, 14, ['Herrn', 'Max Mustermann', 'Musterstr. 11', '12346 Musterhausen']);
    expect((await read(s)).bill_to.name).toBeNull();
  });
});

describe('parties: the address window', () => {
  it("engine: a return line in small print over a long address run, a UK postcode before its town: the window's parties", async () => {
    const s = new Sheet();
    s.text(71, 156, 'Harbour Supplies Ltd · 4 Dock Road · Suite 9 · Unit B · 10115 Berlin', { size: 6 });
    s.lines(71, 176, 15, ['Kestrel Foods GmbH', 'Am Markt 3', 'Haus 2', 'Hinterhof', '04109 Leipzig']);
    s.text(340, 176, 'Invoice Number:').text(454, 176, 'DOC-991');
    expect(await read(s)).toMatchObject({
      vendor: { name: 'Harbour Supplies Ltd' },
      bill_to: { name: 'Kestrel Foods GmbH' },
    });
    const uk = new Sheet();
    uk.text(71, 156, 'Harbour Supplies Ltd · 4 Dock Road · M1 1AA Manchester', { size: 6 });
    uk.lines(71, 176, 15, ['Kestrel Foods GmbH', 'Am Markt 3', '04109 Leipzig']);
    expect((await read(uk)).vendor).toMatchObject({ name: 'Harbour Supplies Ltd' });
  });

  it('engine: a postal endorsement under the return line ("Einschreiben", "Private & Confidential") is no buyer', async () => {
    for (const endorsement of ['Einschreiben', 'Persönlich/Vertraulich', 'Private & Confidential']) {
      const s = new Sheet();
      s.text(71, 156, 'Harbour Supplies GmbH · Dockstr. 4 · 10115 Berlin', { size: 6 });
      s.lines(71, 170, 12, [endorsement, 'Kestrel Foods GmbH', 'Am Markt 3', '04109 Leipzig']);
      expect((await read(s)).bill_to.name, endorsement).toBeNull();
    }
  });
});

describe('parties: the addressee under no heading', () => {
  const letter = () => {
    const s = new Sheet();
    s.text(111, 39, 'Moulin Vert SARL - 3 chemin des Prés - 13100 Aix - France', { size: 8 });
    s.text(31, 109, 'Facture FA-2024-0031', { size: 19 });
    s.text(37, 132, 'Adresse de livraison');
    s.lines(37, 149, 12, ['Épicerie du Lac', '5 rue du Port', '74000 Annecy', '+33 4 50 00 00 00']);
    return s;
  };

  it("engine: a bare block at the right, a name over its address and postcode, is the buyer's", async () => {
    const s = letter();
    s.lines(326, 143, 13, ['Épicerie du Lac', 'Claire Martin', '5 rue du Port', '74000 Annecy', 'France']);
    expect((await read(s)).bill_to.name).toBe('Épicerie du Lac');
  });

  it('engine: two bare blocks, or one with a phone or an id (a letterhead), name no buyer', async () => {
    const two = letter();
    two.lines(326, 143, 13, ['Épicerie du Lac', '5 rue du Port', '74000 Annecy']);
    two.lines(326, 260, 13, ['Fromagerie Alpine', '8 place Neuve', '73000 Chambéry']);
    expect((await read(two)).bill_to.name).toBeNull();
    const phone = letter();
    phone.lines(326, 143, 13, ['Moulin Vert SARL', '3 chemin des Prés', '13100 Aix', 'Tél. +33 4 42 00 00 00']);
    expect((await read(phone)).bill_to.name).toBeNull();
  });
});

describe('parties: the letterhead block', () => {
  const page = (id: string | null) => {
    const s = new Sheet();
    s.text(113, 29, 'Nordlicht Handel').text(255, 29, 'Tel: +49 (030) 41092-0');
    s.text(113, 41, 'Hafenweg 3').text(255, 41, 'Fax: +49 (030) 41092-111');
    s.text(113, 53, '20457 Hamburg').text(255, 53, 'E-Mail: info@nordlicht.example');
    s.text(113, 65, 'Deutschland');
    if (id) s.text(255, 65, `USt-IdNr.: ${id}`);
    s.text(439, 90, 'Rechnung', { size: 24 });
    s.text(17, 137, 'Seeufer Gastro KG').text(229, 137, 'Belegnummer').text(371, 137, '90005178');
    return s;
  };

  it("engine: page 1's first block, a name over its address, with the seller's VAT id beside it, names the seller", async () => {
    expect((await read(page('DE136695976'))).vendor).toMatchObject({ name: 'Nordlicht Handel', vat_id: 'DE136695976' });
    // Without the VAT id nothing says whose block it is (an addressee's opens some pages): null.
    expect((await read(page(null))).vendor.name).toBeNull();
  });
});

describe("parties: the seller's VAT id only where the page says so", () => {
  const page = () => {
    const s = new Sheet();
    s.text(90, 49, 'LOGO NORDWIND', { size: 10 }).text(296, 49, 'FACTURE N° :').text(428, 49, 'F-2024-7');
    s.lines(90, 85, 9, ['NORDWIND SAS', '4 rue des Mâts', '44000 NANTES, FR', 'N° TVA : FR 11 123 456 782']);
    s.text(90, 159, 'Représentant fiscal');
    s.lines(97, 168, 9, ['FISCAL REP SA', 'TVA :FR 05 987 654 321']);
    s.text(90, 207, 'Nos références').text(296, 207, 'Vos identifiants');
    s.lines(303, 216, 9, ['SIREN : 987 654 321', 'N° TVA : FR 05 987 654 321']);
    return s;
  };

  it("engine: the buyer's VAT id under \"Vos identifiants\" and a tax representative's are not the seller's", async () => {
    expect((await read(page())).vendor.vat_id).toBe('FR 11 123 456 782');
    // Without the seller's own id, the others never stand in for it.
    const s = new Sheet();
    s.text(90, 159, 'Représentant fiscal');
    s.lines(97, 168, 9, ['FISCAL REP SA', 'TVA :FR 05 987 654 321']);
    s.text(296, 207, 'Vos identifiants');
    s.lines(303, 216, 9, ['N° TVA : FR 05 987 654 321']);
    expect((await read(s)).vendor.vat_id).toBeNull();
  });

  it('engine: "Ihre USt-IdNr." is the buyer\'s; a VAT id that opens a letterhead line is the seller\'s', async () => {
    const s = new Sheet();
    s.text(60, 50, 'Rechnung 2024-9', { size: 14 });
    s.text(60, 120, 'Ihre USt-IdNr.:').text(200, 120, 'DE136695976');
    expect((await read(s)).vendor.vat_id).toBeNull();
    const t = new Sheet();
    t.text(111, 39, 'TVA : FR11999999998 - SIRET : 99999999800010 - APE : 4778C', { size: 8 });
    t.text(34, 316, 'N° TVA client').text(155, 316, 'FR19787878784');
    expect((await read(t)).vendor.vat_id).toBe('FR11999999998');
  });
});

describe('parties: another address on the page makes a bare block no buyer', () => {
  it("engine: the seller's plain block under the title, the buyer's under an unknown heading: no buyer", async () => {
    const s = new Sheet();
    s.text(60, 40, 'RECHNUNG', { size: 20 });
    s.lines(60, 90, 13, ['Muster Bau GmbH', 'Hauptstraße 5', '10115 Berlin']);
    s.text(320, 90, 'Rechnungsnr.:').text(420, 90, 'R-77');
    s.text(60, 160, 'An:');
    s.lines(60, 176, 13, ['Kunde AG', 'Feldweg 2', '80331 München']);
    expect((await read(s)).bill_to.name).toBeNull();
    // The buyer's block opens with a contact and ends with its VAT id: still another address.
    const t = new Sheet();
    t.text(60, 40, 'INVOICE', { size: 20 });
    t.lines(60, 90, 13, ['Acme Widgets Ltd', '12 High Street', 'M1 1AA Manchester']);
    t.lines(320, 186, 13, [
      'Attn: Accounts',
      'Blue Harbour Cafe',
      '7 Quay Lane',
      'BS1 4DJ Bristol',
      'VAT: GB123456789',
    ]);
    expect((await read(t)).bill_to.name).toBeNull();
  });

  it("engine: the footer's first column (the seller's address) is no buyer", async () => {
    const s = new Sheet();
    s.text(60, 40, 'Rechnung', { size: 20 });
    s.text(60, 100, 'Rechnungsanschrift Kunde:');
    s.lines(60, 116, 13, ['Kunde AG', 'Feldweg 2', '80331 München']);
    s.lines(60, 760, 9, ['Muster Bau GmbH', 'Hauptstraße 5', '10115 Berlin'], { size: 7 });
    s.lines(220, 760, 9, ['Geschäftsführer: Max Muster', 'USt-IdNr.: DE136695976'], { size: 7 });
    expect((await read(s)).bill_to.name).toBeNull();
  });

  it('engine: a delivery address beside a buyer under an unknown heading, or under "Ship To" past a gap, is no buyer', async () => {
    const s = new Sheet();
    s.text(60, 40, 'Acme Widgets Ltd · 12 High Street · Manchester', { size: 7 });
    s.text(60, 70, 'INVOICE', { size: 20 });
    s.text(60, 110, 'Account holder');
    s.lines(60, 126, 13, ['Blue Harbour Cafe', '7 Quay Lane', 'BS1 4DJ Bristol']);
    s.lines(320, 140, 13, ['Blue Harbour Warehouse', 'Unit 4 Dock Road', 'BS2 0XX Bristol']);
    expect((await read(s)).bill_to.name).toBeNull();
    const t = new Sheet();
    t.text(60, 40, 'Acme Widgets Ltd', { size: 16 });
    t.text(60, 140, 'Bill To', { bold: true }).text(200, 140, 'Ship To', { bold: true });
    t.lines(200, 170, 12, ['Blue Harbour Warehouse', 'Unit 4 Dock Road', 'BS2 0XX Bristol']);
    t.text(60, 176, 'Blue Harbour Cafe');
    expect((await read(t)).bill_to.name).toBeNull();
  });
});

describe('parties: what stands under a heading', () => {
  it('engine: past a blank gap under an empty heading, a remark of two lines is no name', async () => {
    const s = new Sheet();
    s.text(60, 40, 'INVOICE INV-77', { size: 16 });
    s.text(60, 100, 'Bill To:');
    s.lines(60, 140, 12, ['Thank you for your order', 'We appreciate your business']);
    expect((await read(s)).bill_to.name).toBeNull();
    const t = new Sheet();
    t.text(60, 100, 'Rechnungsempfänger');
    t.lines(60, 140, 12, ['Lieferbedingungen', 'frei Haus, zahlbar ohne Abzug']);
    expect((await read(t)).bill_to.name).toBeNull();
    // A name over its address past the same gap is the party's.
    const u = new Sheet();
    u.text(60, 100, 'Bill To:');
    u.lines(60, 140, 12, ['Blue Harbour Cafe', '7 Quay Lane', 'BS1 4DJ Bristol']);
    expect((await read(u)).bill_to.name).toBe('Blue Harbour Cafe');
  });

  it('engine: a department over the address ("Accounts Payable") is no name', async () => {
    const s = new Sheet();
    s.text(60, 140, 'Bill To', { bold: true });
    s.lines(60, 156, 12, ['Accounts Payable', '7 Quay Lane', 'BS1 4DJ Bristol']);
    expect((await read(s)).bill_to.name).toBeNull();
  });
});

describe("parties: the seller's letterhead and VAT id", () => {
  it("engine: the addressee's block opening the page, the invoice's details and the seller's VAT id beside it: no seller's name", async () => {
    const s = new Sheet();
    s.lines(60, 60, 13, ['Kunde AG', 'Feldweg 2', '80331 München']);
    s.text(340, 60, 'Rechnung Nr.').text(450, 60, 'R-77');
    s.text(340, 73, 'Datum').text(450, 73, '05.03.2024');
    s.text(340, 86, 'USt-IdNr.').text(450, 86, 'DE136695976');
    expect((await read(s)).vendor).toMatchObject({ name: null, vat_id: 'DE136695976' });
  });

  it('engine: a VAT id in the block under "Customer details" is the buyer\'s, not the seller\'s', async () => {
    const s = new Sheet();
    s.text(60, 40, 'Acme Widgets Ltd', { size: 16 });
    s.lines(60, 60, 12, ['12 High Street', 'M1 1AA Manchester', 'Company No. 1234567']);
    s.text(60, 140, 'Customer details', { bold: true });
    s.lines(60, 156, 12, ['Blue Harbour GmbH', 'Am Markt 3', '04109 Leipzig', 'VAT No: DE136695976']);
    expect((await read(s)).vendor.vat_id).toBeNull();
  });

  it("engine: a tax representative's VAT id under a label that says so is not the seller's", async () => {
    const s = new Sheet();
    s.text(60, 40, 'Harbour Supplies Ltd', { size: 14 });
    s.text(60, 60, 'VAT No (fiscal representative): FR05987654321');
    s.text(60, 120, 'Bill To');
    s.lines(60, 136, 13, ['Kestrel Foods SARL', '3 rue Neuve', '75001 Paris']);
    expect((await read(s)).vendor.vat_id).toBeNull();
  });
});
