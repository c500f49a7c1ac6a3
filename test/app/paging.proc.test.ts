import pLimit from 'p-limit';
import { describe, expect } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import type { Engine, EngineOutput } from '../../src/engine/types.ts';
import { call, inlineBody } from '../helpers/emulator.ts';
import { makePdf } from '../helpers/pdf.ts';
import { it, screenshot } from './browser.ts';

// Past 1,000 (so the counts need their separators) with a last page that is not full.
const DOCUMENTS = 1010;
const PAGE_SIZE = 50;
const PAGES = Math.ceil(DOCUMENTS / PAGE_SIZE);
const fmt = (n: number): string => n.toLocaleString('en-US');

describe('the documents list with many documents', () => {
  it(`pages through ${DOCUMENTS} documents correctly and follows new ones without a reload`, {
    timeout: 120_000,
  }, async ({ browserPage, emulator, sharedEngine }) => {
    // The documents are seeded inline, as many at once as the emulator reads (more would wait in
    // its queue on the inline deadline's clock), under a deadline no loaded machine reaches: a
    // 503 at 30 s failed this test beside a second copy of the suite, which is not what it tests.
    // They are one PDF a thousand times: the engine reads it once, and each document gets that
    // reading (the list is under test here, not the engine; reading each copy was most of the CPU).
    const real = sharedEngine;
    let pages: Promise<number> | undefined;
    let reading: Promise<EngineOutput> | undefined;
    const engine: Engine = {
      countPages: (bytes, mimeType, options) => (pages ??= real.countPages(bytes, mimeType, options)),
      extract: (input, options) => (reading ??= real.extract(input, options)),
      close: async () => {},
    };
    const server = await emulator(
      {
        credits: 100_000,
        processing: { ms_per_page: 0, concurrency: 4 },
        inline: { ...DEFAULT_CONFIG.inline, timeout_ms: 600_000 },
      },
      { engine },
    );
    const pdf = await makePdf([['Invoice Number: TINY-1', 'Total: 1.00']]);
    // Through the gateway, the rules POST /extract runs once the request is decoded: over HTTP the
    // seeding took 5.4 CPU-s of the test's own process (2.0 this way); the list is under test, and
    // the route of POST /extract has its own tests. The newest document below still comes by HTTP.
    const parser = server.config.parsers[0]!;
    const limit = pLimit(4);
    const send = (n: number) =>
      limit(async () => {
        const answer = await server.gateway.extractInline(
          parser,
          inlineBody(pdf, `doc-${String(n).padStart(4, '0')}.pdf`),
        );
        expect(answer.success).toBe(true);
      });
    await Promise.all(Array.from({ length: DOCUMENTS }, (_, n) => send(n)));

    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/`);
    const range = page.locator('.pager-range').first();
    await range.filter({ hasText: `1–50 of ${DOCUMENTS.toLocaleString('en-US')}` }).waitFor();
    expect(await page.locator('tr[data-id]').count()).toBe(PAGE_SIZE);
    expect(await page.locator('.pager-page').first().textContent()).toBe(`Page 1 of ${PAGES}`);

    // The page's order is the server's: compare each page with the API's own answer.
    const namesOnPage = () => page.locator('tr[data-id] .file-name').allTextContents();
    const apiPage = async (p: number) =>
      (
        (await call(server, 'GET', `/_emulator/documents?offset=${(p - 1) * PAGE_SIZE}&limit=${PAGE_SIZE}`)).body
          .documents as Array<{ file_name: string }>
      ).map((d) => d.file_name);
    expect(await namesOnPage()).toEqual(await apiPage(1));

    await page.getByRole('link', { name: 'Next page' }).first().click();
    await range.filter({ hasText: '51–100 of' }).waitFor();
    expect(page.url()).toContain('#/documents?page=2');
    expect(await namesOnPage()).toEqual(await apiPage(2));

    await page.getByRole('link', { name: 'Last page' }).first().click();
    const lastFirst = (PAGES - 1) * PAGE_SIZE + 1;
    await range.filter({ hasText: `${fmt(lastFirst)}–${fmt(DOCUMENTS)} of ${fmt(DOCUMENTS)}` }).waitFor();
    expect(await page.locator('.pager-page').first().textContent()).toBe(`Page ${PAGES} of ${PAGES}`);
    expect(await namesOnPage()).toEqual(await apiPage(PAGES));
    expect(await page.locator('tr[data-id]').count()).toBe(DOCUMENTS - lastFirst + 1);
    expect(await page.locator('.pager-link[aria-disabled="true"]', { hasText: 'Next ›' }).count()).toBe(2);

    // A page number past the end lands on the last page; a reload keeps the page.
    await page.goto(`${server.url}/#/documents?page=99`);
    await page
      .locator('.pager-page', { hasText: `Page ${PAGES} of ${PAGES}` })
      .first()
      .waitFor();
    await page.reload();
    await page
      .locator('.pager-page', { hasText: `Page ${PAGES} of ${PAGES}` })
      .first()
      .waitFor();

    // New documents show up on page 1 without a reload, and the total follows.
    await page.getByRole('link', { name: 'First page' }).first().click();
    await range.filter({ hasText: `1–50 of ${fmt(DOCUMENTS)}` }).waitFor();
    await call(server, 'POST', '/api/v1/extract', { body: inlineBody(pdf, 'newest.pdf') });
    await range.filter({ hasText: `1–50 of ${fmt(DOCUMENTS + 1)}` }).waitFor();
    expect((await namesOnPage())[0]).toBe('newest.pdf');

    // The status filter pages too.
    await page.selectOption('#status-filter', 'completed');
    await page.locator('.heading-count', { hasText: `${fmt(DOCUMENTS + 1)} completed` }).waitFor();
    expect(page.url()).toContain('status=completed');
    await page.selectOption('#status-filter', 'error');
    await page.locator('.empty-state', { hasText: 'No error documents.' }).waitFor();
    await page.selectOption('#status-filter', '');
    await range.filter({ hasText: `1–50 of ${fmt(DOCUMENTS + 1)}` }).waitFor();
    await screenshot(page, 'documents-many');
    expect(errors).toEqual([]);
  });
});

describe('the browser tests', () => {
  it('fail, not skip, when chromium is missing, and say how to install it', async ({ browserPage }) => {
    await expect(browserPage({ executable: '/nonexistent/chromium' })).rejects.toThrow(
      /chromium is not installed at \/nonexistent\/chromium: install it \(apt-get update && apt-get install -y chromium/,
    );
  });
});
