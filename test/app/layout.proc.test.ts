import type { Page } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { call, inlineBody, submitStored } from '../helpers/emulator.ts';
import { it, screenshot } from './browser.ts';

// The application's layout, measured in a real chromium at a laptop's 1366 px and a phone's 390 px:
// where things are on the screen (getBoundingClientRect), not only that they exist.

/** Two pages, the total on the second: the page pane has to scroll to show its box. */
const TWO_PAGES = 'fixtures/invoices/06-table-two-pages.pdf';
/** One page, with fields the engine cannot ground (the review list has entries). */
const ONE_PAGE = 'fixtures/invoices/02-eu-formats.pdf';

const LAPTOP = { width: 1366, height: 768 };
const PHONE = { width: 390, height: 844 };
/** A wait, not a claim about speed (a scroll is one frame on an idle machine): it ends as soon as the box is in view. */
const POLL = { timeout: 60_000 };

type Rect = { top: number; bottom: number; left: number; right: number };

async function completed(server: { url: string }, file: string, name = file.split('/').pop()!): Promise<string> {
  const r = await call(server, 'POST', '/api/v1/extract', { body: inlineBody(readFileSync(file), name) });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.document_id as string;
}

/** A document sent by the upload-and-poll route that ends in error with `message` (an injected fault). */
async function failed(server: { url: string }, message: string): Promise<string> {
  const rule = await call(server, 'POST', '/_emulator/faults', {
    body: { operation: 'extract-async', effect: { type: 'async_error', message }, times: 1 },
  });
  expect(rule.status, JSON.stringify(rule.body)).toBeLessThan(300);
  return submitStored(server, readFileSync(ONE_PAGE), 'jammed.pdf');
}

const rect = (page: Page, selector: string): Promise<Rect> =>
  page.evaluate(`(() => {
    const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
  })()`);

/** The part of the window not under the sticky header. */
const visibleArea = (page: Page): Promise<Rect> =>
  page.evaluate(`({
    top: document.querySelector('header.top').getBoundingClientRect().bottom,
    bottom: window.innerHeight, left: 0, right: window.innerWidth,
  })`);

const inside = (r: Rect, area: Rect) =>
  r.top >= area.top - 1 && r.bottom <= area.bottom + 1 && r.left >= area.left - 1 && r.right <= area.right + 1;

/** Opens a completed document's page and waits for its pages to be drawn. */
async function openDocument(page: Page, url: string, id: string, pages: number) {
  await page.goto(`${url}/#/documents/${id}`);
  await page.locator('.results').waitFor();
  await page.locator(`.page[data-page="${pages}"] canvas`).waitFor();
  await page.locator('.value-box').first().waitFor();
  // Drawn (dark pixels on the last page's canvas), so that the screenshots show the pages.
  await expect
    .poll(
      () =>
        page.evaluate(`(() => {
        const c = document.querySelector('.page[data-page="${pages}"] canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let dark = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 100 && d[i + 3] > 0) dark++;
        return dark;
      })()`),
      { timeout: 60_000 },
    )
    .toBeGreaterThan(500);
}

describe('the document view keeps the page in sight', { timeout: 120_000 }, () => {
  it('at 1366 px the page pane stays in view while the fields scroll, and a hovered or focused field brings its box into view', async ({
    browserPage,
    emulator,
  }) => {
    const server = await emulator();
    const id = await completed(server, TWO_PAGES);
    const { page, errors } = await browserPage(LAPTOP);
    await openDocument(page, server.url, id, 2);
    await screenshot(page, 'layout-document-1366-top', { fullPage: false });
    const area = await visibleArea(page);

    // The fields below the first screen: scrolled to, the page pane is still beside them.
    const raw = page.locator('.raw summary');
    await raw.scrollIntoViewIfNeeded();
    expect(inside(await rect(page, '.raw summary'), area)).toBe(true);
    // (Near the end of the page the pane may slide up a little under the header: most of it is in view.)
    const pane = await rect(page, '.pages');
    const shown = Math.min(pane.bottom, area.bottom) - Math.max(pane.top, area.top);
    expect(shown / (area.bottom - area.top), 'the share of the screen the page pane fills').toBeGreaterThan(0.8);

    // Hovering Total (on page 2): its box is highlighted and on screen, and Total itself did not move away.
    const total = page.locator('.field[data-path="total"]');
    await total.scrollIntoViewIfNeeded();
    const scrollY = await page.evaluate<number>('window.scrollY');
    await total.hover();
    const box = page.locator('.value-box[data-path="total"]');
    expect(await box.getAttribute('class')).toContain('highlight');
    expect(await page.locator('.page[data-page="2"] .value-box[data-path="total"]').count()).toBe(1);
    await expect.poll(async () => inside(await rect(page, '.value-box[data-path="total"]'), area), POLL).toBe(true);
    expect(inside(await rect(page, '.field[data-path="total"]'), area)).toBe(true);
    // Only the page pane scrolled: the window, and so the field under the pointer, stayed.
    expect(await page.evaluate<number>('window.scrollY')).toBe(scrollY);
    await screenshot(page, 'layout-document-1366', { fullPage: false });

    // Focus from the keyboard does the same for a value on page 1.
    await page.locator('.field[data-path="invoice_number"]').focus();
    const first = '.value-box[data-path="invoice_number"]';
    expect(await page.locator(first).getAttribute('class')).toContain('highlight');
    await expect.poll(async () => inside(await rect(page, first), area), POLL).toBe(true);
    expect(inside(await rect(page, '.field[data-path="invoice_number"]'), area)).toBe(true);

    // And a table cell's box (the last line item, on page 2).
    const cells = page.locator('table.result-table td[data-path$=".amount"]');
    const last = cells.last();
    const path = await last.getAttribute('data-path');
    await last.hover();
    await expect.poll(async () => inside(await rect(page, `.value-box[data-path="${path}"]`), area), POLL).toBe(true);
    expect(errors).toEqual([]);
  });

  it('at 390 px the fields that need review come first, within the first screen', async ({ browserPage, emulator }) => {
    const server = await emulator();
    const id = await completed(server, ONE_PAGE);
    const { page, errors } = await browserPage(PHONE);
    await openDocument(page, server.url, id, 1);
    expect(await page.locator('.review-list li').count()).toBeGreaterThan(0);
    expect(await page.evaluate<number>('window.scrollY')).toBe(0);
    const review = await rect(page, '.review-list');
    expect(review.top, 'the review list starts on the first screen').toBeLessThan(PHONE.height - 60);
    // It comes before the page, which follows it.
    expect(review.top).toBeLessThan((await rect(page, '.pages')).top);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - innerWidth')).toBeLessThanOrEqual(0);
    // The line items (four columns) fit the phone's width: Amount is not behind a sideways scroll.
    expect(
      await page.evaluate<number>(
        "(() => { const s = document.querySelector('table.result-table').closest('.table-scroll'); return s.scrollWidth - s.clientWidth; })()",
      ),
    ).toBeLessThanOrEqual(0);
    await screenshot(page, 'layout-document-390-first-screen', { fullPage: false });

    // Each entry leads to its field, far below: in view and focused.
    await page.locator('.review-list li[data-review="paid"] button').click();
    const paid = '.field[data-path="paid"]';
    expect(inside(await rect(page, paid), await visibleArea(page))).toBe(true);
    expect(await page.evaluate<boolean>(`document.activeElement === document.querySelector('${paid}')`)).toBe(true);
    await screenshot(page, 'layout-document-390-review-jump', { fullPage: false });
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'layout-document-390');
    expect(errors).toEqual([]);
  });
});

/**
 * What is cut off in a list (`table`): the list scrolling sideways, a header or cell outside the
 * list's box, or a cell whose content overflows it. Empty when every column is whole.
 */
async function clippedCells(page: Page, table: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const table = document.querySelector(${JSON.stringify(table)});
    const scroll = table.closest('.table-scroll');
    const box = scroll.getBoundingClientRect();
    const out = [];
    if (scroll.scrollWidth > scroll.clientWidth) out.push('the list scrolls sideways: ' + scroll.scrollWidth + ' > ' + scroll.clientWidth);
    for (const cell of table.querySelectorAll('th, td')) {
      if (cell.offsetParent === null) continue; // a column hidden at this width
      // Headings kept for screen readers only (a narrow window's cards name each value instead).
      if (cell.closest('thead') && cell.closest('thead').getBoundingClientRect().width <= 1) continue;
      const r = cell.getBoundingClientRect();
      const name = cell.tagName + ' ' + JSON.stringify(cell.textContent.trim().slice(0, 24));
      if (cell.scrollWidth > cell.clientWidth) out.push(name + ' overflows: ' + cell.scrollWidth + ' > ' + cell.clientWidth);
      if (r.right > box.right + 1 || r.left < box.left - 1) out.push(name + ' is outside the list: ' + Math.round(r.left) + '..' + Math.round(r.right) + ' vs ' + Math.round(box.left) + '..' + Math.round(box.right));
    }
    return out;
  })()`);
}

describe('the lists', { timeout: 120_000 }, () => {
  it('fit their columns at 1366 and 390 px: documents (a long file name, a long error), ledger, delivery log, fault rules', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const hook = await hookServer();
    const server = await emulator({
      credits: 100_000,
      parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url, id: 'main' }] }],
    });
    await completed(server, ONE_PAGE);
    await completed(server, TWO_PAGES, `${'quarterly-statement-for-the-northern-region-'.repeat(3)}final.pdf`);
    await failed(
      server,
      `the scanner jammed on a very long sheet of paper that ${'goes on and on '.repeat(12)}(injected)`,
    );
    expect((await call(server, 'POST', '/_emulator/integrations/main/test')).status).toBeLessThan(300);
    await hook.waitFor(1);
    await call(server, 'POST', '/_emulator/faults', {
      body: { operation: 'webhook', effect: { type: 'delay', ms: 10 }, probability: 0.5, times: 3 },
    });

    const lists = [
      ['documents', 'table.docs'],
      ['credits', 'table.ledger'],
      ['webhooks', 'table.deliveries'],
      ['faults', 'table.faults'],
    ] as const;
    for (const viewport of [LAPTOP, PHONE]) {
      const { page, errors } = await browserPage(viewport);
      for (const [view, table] of lists) {
        await page.goto(`${server.url}/#/${view}`);
        await page.locator(`${table} tbody tr td:not([colspan])`).first().waitFor();
        expect(await clippedCells(page, table), `${view} at ${viewport.width} px`).toEqual([]);
        await screenshot(page, `layout-${view}-${viewport.width}`);
      }
      // The documents list's Pages column is whole and its numbers are shown.
      await page.goto(`${server.url}/#/documents`);
      await page.locator('tr[data-id]').nth(2).waitFor();
      expect(await page.locator('table.docs td.num').allTextContents()).toContain('2');
      expect(errors).toEqual([]);
    }
  });
});

describe('a failed document', { timeout: 120_000 }, () => {
  it('says "refunded" once', async ({ browserPage, emulator }) => {
    const server = await emulator();
    const id = await failed(server, 'the scanner jammed (injected)');
    const { page, errors } = await browserPage(LAPTOP);
    await page.goto(`${server.url}/#/documents/${id}`);
    const panel = page.locator('.error-box');
    await panel.waitFor({ timeout: 45_000 });
    const text = (await panel.textContent()) ?? '';
    expect(text).toContain('the scanner jammed (injected)');
    expect(text.match(/refunded/g) ?? []).toHaveLength(1);
    await screenshot(page, 'layout-error-1366');

    // A message that does not say it (a file the engine cannot read): the panel says it, once.
    const ticket = await call(server, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'broken.pdf', file_type: 'application/pdf' },
    });
    await call(server, 'PUT', ticket.body.upload_url, {
      raw: '%PDF-1.4 this is not a PDF',
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    const broken = await call(server, 'POST', '/api/v1/extract', { body: { storage_path: ticket.body.storage_path } });
    await page.goto(`${server.url}/#/documents/${broken.body.document_id}`);
    await page.locator('.error-box').waitFor({ timeout: 45_000 });
    const message = (await call(server, 'GET', `/_emulator/documents/${broken.body.document_id}`)).body.error as string;
    expect(message).not.toMatch(/refund/);
    expect(((await page.locator('.error-box').textContent()) ?? '').match(/refunded/g) ?? []).toHaveLength(1);
    expect(errors).toEqual([]);
  });
});
