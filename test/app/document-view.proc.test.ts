import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { call, inlineBody, submitStored } from '../helpers/emulator.ts';
import { makePdf } from '../helpers/pdf.ts';
import { grayPng, renderGray } from '../helpers/scan.ts';
import { it, screenshot } from './browser.ts';

/** A fixture with line items, an Object field and fields the engine cannot ground. */
const FIXTURE = 'fixtures/invoices/02-eu-formats.pdf';

describe('the document view: pages with a box on each value', { timeout: 120_000 }, () => {
  it('draws the PDF page with pdfjs, a box per grounded value, highlights on hover and focus, and lists what needs review', async ({
    browserPage,
    emulator,
  }) => {
    const server = await emulator();
    const id = await submitStored(server, readFileSync(FIXTURE), '02-eu-formats.pdf');
    const detail = await call(server, 'GET', `/_emulator/documents/${id}`, { key: null });
    for (let i = 0; detail.body.status === 'processing' && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      Object.assign(detail, await call(server, 'GET', `/_emulator/documents/${id}`, { key: null }));
    }
    expect(detail.body.status).toBe('completed');
    const grounded = Object.keys(detail.body.grounding);
    expect(grounded).toContain('total');

    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/#/documents/${id}`);
    await page.locator('.results').waitFor();
    const canvas = page.locator('.page[data-page="1"] canvas');
    await canvas.waitFor();
    // The page is really drawn: the canvas holds dark pixels (text), not only white.
    await expect
      .poll(() =>
        page.evaluate(`(() => {
          const c = document.querySelector('.page[data-page="1"] canvas');
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let dark = 0;
          for (let i = 0; i < d.length; i += 4) if (d[i] < 100 && d[i + 3] > 0) dark++;
          return dark;
        })()`),
      )
      .toBeGreaterThan(500);

    // One box per grounded value, each on the page.
    expect(await page.locator('.value-box').count()).toBe(grounded.length);
    const totalBox = page.locator('.value-box[data-path="total"]');
    const box = await totalBox.boundingBox();
    const frame = await page.locator('.page[data-page="1"]').boundingBox();
    expect(box && frame && box.x >= frame.x && box.y >= frame.y && box.x + box.width <= frame.x + frame.width + 1).toBe(
      true,
    );

    // Hovering a field highlights its box; focusing one (keyboard) does too.
    expect(await totalBox.getAttribute('class')).not.toContain('highlight');
    await page.locator('.field[data-path="total"]').hover();
    expect(await totalBox.getAttribute('class')).toContain('highlight');
    await screenshot(page, 'document-pages');
    await page.locator('.field[data-path="invoice_number"]').focus();
    expect(await page.locator('.value-box[data-path="invoice_number"]').getAttribute('class')).toContain('highlight');
    // A table cell has its own box.
    expect(await page.locator('.value-box[data-path="line_items[0].amount"]').count()).toBe(1);

    // The fields that need review are listed, and have no box.
    const review = await page
      .locator('.review-list li')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-review')));
    expect(review).toContain('purchase_order');
    expect(review.length).toBeGreaterThan(0);
    for (const path of review) expect(grounded).not.toContain(path);
    expect(errors).toEqual([]);
  });

  it('shows a scan with a box on each value OCR read, and says why a blank scan is all null', async ({
    browserPage,
    emulator,
  }) => {
    const server = await emulator();
    const invoice = await renderGray(await makePdf([['Invoice number INV-1234', '', 'Total 99.50']]), 200);
    const send = async (png: Buffer, name: string) => {
      const r = await call(server, 'POST', '/api/v1/extract', { body: inlineBody(png, name, 'image/png') });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.document_id as string;
    };
    const scanned = await send(await grayPng(invoice), 'scan.png');
    const blank = await send(
      await grayPng({ ...invoice, pixels: new Uint8Array(invoice.pixels.length).fill(255) }),
      'blank.png',
    );

    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/#/documents/${scanned}`);
    await page.locator('.page[data-page="1"] img').waitFor();
    const totalBox = page.locator('.value-box[data-path="total"]');
    await totalBox.waitFor();
    const box = await totalBox.boundingBox();
    const frame = await page.locator('.page[data-page="1"]').boundingBox();
    // "Total 99.50" stands in the page's top left quarter.
    expect(box && frame && box.x > frame.x && box.x < frame.x + frame.width / 2).toBe(true);
    expect(box && frame && box.y > frame.y && box.y < frame.y + frame.height / 4).toBe(true);
    expect(await page.locator('.reading-notes').count()).toBe(0);
    await screenshot(page, 'document-scan');

    await page.goto(`${server.url}/#/documents/${blank}`);
    await page.locator('.reading-notes').waitFor();
    expect(await page.locator('.reading-notes li').allTextContents()).toEqual([
      expect.stringMatching(/page 1 has no text layer, and OCR found no words/),
    ]);
    expect(errors).toEqual([]);
  }, 180_000);

  it("serves only the browser build of pdfjs-dist, under the page's security headers", async ({ emulator }) => {
    const server = await emulator();
    const lib = await fetch(`${server.url}/_app/pdfjs/build/pdf.min.mjs`);
    expect(lib.status).toBe(200);
    expect(lib.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${server.url}/_app/pdfjs/package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/_app/pdfjs/legacy/build/pdf.mjs`)).status).toBe(404);
  });
});
