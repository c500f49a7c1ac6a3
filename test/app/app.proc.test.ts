import type { Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import type { Servers } from '../helpers/fixtures.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { call, KEY, type StartEmulator, submitStored } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it, screenshot } from './browser.ts';

/** A fixture with line items and two fields the engine cannot ground (purchase_order, paid). */
const FIXTURE = 'fixtures/invoices/02-eu-formats.pdf';

async function serve(hookServer: Servers['hookServer'], emulator: StartEmulator) {
  const hook = await hookServer();
  const server = await emulator({
    credits: 100_000,
    parsers: [{ ...DEFAULT_CONFIG.parsers[0]!, webhooks: [{ url: hook.url, id: 'main' }] }],
  });
  return { server, hook };
}

/** The row of the documents list for a file name. */
const rowOf = (page: Page, fileName: string) => page.locator('tr[data-id]', { hasText: fileName });

describe('the application page', { timeout: 120_000 }, () => {
  it('upload a fixture, watch it complete, open its results: a Table field as a table, nulls marked "needs review"', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/`);
    await page.locator('h1', { hasText: 'Documents' }).waitFor();
    await page.locator('.empty-state', { hasText: 'No documents yet' }).waitFor();

    await page.setInputFiles('#upload-input', FIXTURE);
    await page.locator('.upload-status', { hasText: 'Uploaded 02-eu-formats.pdf' }).waitFor();
    // It appears without a reload and ends completed, as an upload.
    const row = rowOf(page, '02-eu-formats.pdf');
    await row.and(page.locator('[data-status="completed"]')).waitFor({ timeout: 45_000 });
    expect(await row.locator('td').nth(2).textContent()).toBe('Upload');
    expect(await row.locator('td').nth(3).textContent()).toBe('1');
    await screenshot(page, 'documents');

    // Enter on the focused row opens it.
    await row.focus();
    await page.keyboard.press('Enter');
    await page.locator('h1', { hasText: '02-eu-formats.pdf' }).waitFor();
    await page.locator('.results').waitFor();

    const table = page.locator('table.result-table[data-field="line_items"]');
    await table.waitFor();
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'Description',
      'Quantity',
      'Unit Price',
      'Amount',
    ]);
    expect(await table.locator('tbody tr').count()).toBe(3);
    expect(await table.locator('tbody tr').first().locator('td').allTextContents()).toEqual([
      'Software licence (annual)',
      '5',
      '1200',
      '6000',
    ]);

    // A null is "needs review", unlike a value; Object fields are groups.
    const po = page.locator('.field[data-field="purchase_order"] dd');
    expect(await po.textContent()).toBe('needs review');
    expect(await po.locator('[data-null]').count()).toBe(1);
    expect(await page.locator('.field[data-field="invoice_number"] dd').textContent()).toBe('RE-2024-0042');
    expect(await page.locator('.field[data-field="total"] dd').textContent()).toBe('9490.25');
    expect(await page.locator('.group-object[data-field="vendor"] .field[data-field="name"] dd').textContent()).toBe(
      'Nordlicht Software GmbH',
    );
    expect(await page.locator('.results-head').textContent()).toContain('2 fields need review');
    await screenshot(page, 'document');

    // Back to the list by the link.
    await page.getByRole('link', { name: '← Documents' }).click();
    await page.locator('h1', { hasText: 'Documents' }).waitFor();
    expect(errors).toEqual([]);
  });

  it('null, 0 and an empty string look different; a failed document shows its error', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    // A one-page text file the engine grounds only partly, and a corrupt PDF that fails.
    const bad = await call(server, 'POST', '/api/v1/upload-url', {
      body: { file_name: 'broken.pdf', file_type: 'application/pdf' },
    });
    await call(server, 'PUT', bad.body.upload_url, {
      raw: '%PDF-1.4 this is not a PDF',
      key: null,
      headers: { 'content-type': 'application/pdf' },
    });
    const accepted = await call(server, 'POST', '/api/v1/extract', { body: { storage_path: bad.body.storage_path } });
    await page.goto(`${server.url}/#/documents/${accepted.body.document_id}`);
    await page.locator('.error-box').waitFor({ timeout: 45_000 });
    const message = (await call(server, 'GET', `/_emulator/documents/${accepted.body.document_id}`)).body
      .error as string;
    expect(message.length).toBeGreaterThan(0);
    expect(await page.locator('.error-message').textContent()).toBe(message);
    expect(await page.locator('.doc-status').textContent()).toBe('error');

    // The renderer itself, on values the engine may produce: each kind reads differently.
    // (A string, so that vitest does not rewrite the page's own import().)
    const shown = await page.evaluate(`import('/_app/js/results.js').then(({ leafValue }) =>
      [null, 0, '', 'x', false].map((v) => { const el = leafValue('string', v); return { text: el.textContent, className: el.className }; }))`);
    expect(shown).toEqual([
      { text: 'needs review', className: 'needs-review' },
      { text: '0', className: 'number' },
      { text: 'empty text', className: 'empty-value' },
      { text: 'x', className: 'text' },
      { text: 'No', className: 'bool bool-false' },
    ]);
    expect(errors).toEqual([]);
  });

  it('fire a webhook test and see the attempt in the delivery log; resend adds an attempt', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server, hook } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/#/webhooks`);
    const card = page.locator('article.integration[data-integration="main"]');
    await card.waitFor();
    expect(await card.locator('.url').textContent()).toBe(hook.url);
    expect(await card.textContent()).toContain('POST');

    await card.getByRole('button', { name: 'Send test event' }).click();
    await hook.waitFor(1);
    const row = page.locator('tr[data-delivery]').first();
    await row.and(page.locator('[data-state="delivered"]')).waitFor();
    expect(await row.locator('.tag').textContent()).toBe('test');
    const attempt = row.locator('.attempts li[data-attempt="1"]');
    expect(await attempt.locator('.attempt-status').textContent()).toBe('200');
    expect(await attempt.textContent()).toMatch(/\d+ ms/);
    expect(await attempt.locator('.excerpt').textContent()).toBe('ok from hook server');

    await row.getByRole('button', { name: /Resend/ }).click();
    await hook.waitFor(2);
    await row.locator('.attempts li[data-attempt="2"]').waitFor();
    expect(JSON.parse(hook.hits[1]!.body).document_id).toBe(JSON.parse(hook.hits[0]!.body).document_id);
    await screenshot(page, 'webhooks');
    expect(errors).toEqual([]);
  });

  it('a fault added on the page makes a document fail with its message', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/#/faults`);
    await page.locator('h1', { hasText: 'Faults' }).waitFor();
    await page.locator('tbody', { hasText: 'No rules' }).waitFor();

    await page.selectOption('#fault-operation', 'extract-async');
    await page.selectOption('#fault-effect', 'async_error');
    await page.fill('#fault-message', 'the scanner jammed (injected)');
    await page.getByRole('button', { name: 'Add rule' }).click();
    const rule = page.locator('tr[data-rule]');
    await rule.waitFor();
    expect(await rule.textContent()).toContain('the scanner jammed (injected)');
    const rules = (await call(server, 'GET', '/_emulator/faults')).body.rules;
    expect(rules).toMatchObject([
      {
        operation: 'extract-async',
        probability: 1,
        effect: { type: 'async_error', message: 'the scanner jammed (injected)' },
      },
    ]);
    await screenshot(page, 'faults');

    // A document sent by the upload-and-poll route (operation extract-async) ends in error.
    const id = await submitStored(server, await invoicePdf(7), 'jammed.pdf');
    await page.getByRole('link', { name: 'Documents' }).click();
    const row = rowOf(page, 'jammed.pdf');
    await row.and(page.locator('[data-status="error"]')).waitFor({ timeout: 45_000 });
    expect(await row.locator('.row-error').textContent()).toContain('the scanner jammed (injected)');
    await row.click();
    await page.locator('.error-box').waitFor();
    expect(await page.locator('.error-message').textContent()).toContain('the scanner jammed (injected)');
    expect(page.url()).toContain(id);

    // Clear: the rule list is empty again, and documents complete.
    await page.getByRole('link', { name: 'Faults' }).click();
    await page.locator('tr[data-rule]').waitFor();
    await page.getByRole('button', { name: 'Clear all rules' }).click();
    await page.locator('tbody', { hasText: 'No rules' }).waitFor();
    expect((await call(server, 'GET', '/_emulator/faults')).body.rules).toEqual([]);

    // With the rule gone, uploads complete again: the list shows both outcomes (docs/app-documents.png).
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.setInputFiles('#upload-input', [
      FIXTURE,
      'fixtures/invoices/01-us-standard.pdf',
      'fixtures/invoices/06-table-two-pages.pdf',
    ]);
    await page.locator('tr[data-status="completed"]').nth(2).waitFor({ timeout: 45_000 });
    await screenshot(page, 'documents-mixed');
    expect(errors).toEqual([]);
  });

  it('parsers: the Field definition nested, the API key masked, its copy button copies the key', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    await page.goto(`${server.url}/#/parsers`);
    const card = page.locator('article.parser[data-parser="prs_invoices"]');
    await card.waitFor();
    expect(await card.locator('h2').textContent()).toBe('Invoices prs_invoices');
    expect(await card.locator('li[data-field="line_items"] > .fielddef li').count()).toBe(4);
    expect(await card.locator('li[data-field="vendor"] > .fielddef > li[data-field="vat_id"]').count()).toBe(1);
    const masked = await card.locator('.masked').textContent();
    expect(masked).not.toContain(KEY);
    expect(await page.content()).not.toContain(KEY);
    await card.getByRole('button', { name: /Copy API key/ }).click();
    await card.locator('.copied', { hasText: 'Copied' }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(KEY);
    await screenshot(page, 'parsers');
    expect(errors).toEqual([]);
  });

  it('credits: the ledger per document, and a top-up', async ({ hookServer, browserPage, emulator }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    const body = {
      file: { data: (await invoicePdf(3, 2)).toString('base64'), name: 'two-pages.pdf', type: 'application/pdf' },
    };
    expect((await call(server, 'POST', '/api/v1/extract', { body })).status).toBe(200);
    await page.goto(`${server.url}/#/credits`);
    await page.locator('#balance', { hasText: '99,998' }).waitFor();
    const reserve = page.locator('tr[data-kind="reserve"]');
    expect(await reserve.locator('td').nth(2).textContent()).toBe('−2');
    expect(await reserve.locator('td').nth(3).textContent()).toBe('two-pages.pdf');

    await page.fill('#topup-pages', '500');
    await page.getByRole('button', { name: 'Top up' }).click();
    await page.locator('#balance', { hasText: '100,498' }).waitFor();
    await page.locator('tr[data-kind="topup"]').waitFor();
    expect((await call(server, 'GET', '/_emulator/ledger')).body.balance).toBe(100_498);
    await screenshot(page, 'credits');
    expect(errors).toEqual([]);
  });

  it('a narrow window (390 px) has no sideways scrolling, and every view reads', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage({ width: 390, height: 844 });
    await page.goto(`${server.url}/`);
    await page.setInputFiles('#upload-input', [FIXTURE, 'fixtures/invoices/01-us-standard.pdf']);
    await page.locator('tr[data-status="completed"]').nth(1).waitFor({ timeout: 45_000 });
    const overflow = () =>
      page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await screenshot(page, 'documents-narrow');
    await rowOf(page, '02-eu-formats.pdf').click();
    await page.locator('table.result-table').waitFor();
    expect(await overflow()).toBeLessThanOrEqual(0);
    await screenshot(page, 'document-narrow');
    for (const view of ['parsers', 'credits', 'webhooks', 'faults']) {
      await page.goto(`${server.url}/#/${view}`);
      await page.locator('h1').waitFor();
      expect(await overflow(), view).toBeLessThanOrEqual(0);
    }
    expect(errors).toEqual([]);
  });

  it('keyboard: the views are reachable by Tab, focus is visible, Space opens a row', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    const body = {
      file: { data: (await invoicePdf(1)).toString('base64'), name: 'keyboard.pdf', type: 'application/pdf' },
    };
    await call(server, 'POST', '/api/v1/extract', { body });
    await page.goto(`${server.url}/`);
    await rowOf(page, 'keyboard.pdf').waitFor();

    // Tab from the top: skip link, then the five views in order.
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      names.push(await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''"));
    }
    expect(names).toEqual(['Skip to content', 'Documents', 'Parsers', 'Credits', 'Webhooks', 'Faults']);
    const outline = await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).toBe('solid');

    // Tab on reaches the upload button, the filter, and the row; Space opens it.
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate<boolean>("document.activeElement?.matches('tr[data-id]') ?? false")) break;
    }
    expect(await page.locator(':focus').getAttribute('aria-label')).toBe('keyboard.pdf, completed');
    await page.keyboard.press('Space');
    await page.locator('h1', { hasText: 'keyboard.pdf' }).waitFor();
    expect(await page.evaluate<string>('document.activeElement?.tagName')).toBe('H1');
    expect(errors).toEqual([]);
  });

  it('shows data as text, never as markup; the page is served with a strict CSP', async ({
    hookServer,
    browserPage,
    emulator,
  }) => {
    const { server } = await serve(hookServer, emulator);
    const { page, errors } = await browserPage();
    const res = await fetch(`${server.url}/`);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect((await fetch(`${server.url}/_app/app.css`)).status).toBe(200);
    expect((await fetch(`${server.url}/_app/js/main.js`)).headers.get('content-type')).toContain('javascript');

    // Text from outside (here a fault's message, shown as a document's error) stays text.
    const message = '<img src=x onerror="window.pwned=1"><b>bold</b> & more';
    await call(server, 'POST', '/_emulator/faults', {
      body: { operation: 'extract-async', effect: { type: 'async_error', message } },
    });
    await submitStored(server, await invoicePdf(9), 'markup.pdf');
    await page.goto(`${server.url}/`);
    const row = rowOf(page, 'markup.pdf').and(page.locator('[data-status="error"]'));
    await row.waitFor({ timeout: 45_000 });
    expect(await row.locator('.row-error').textContent()).toContain(message);
    await row.click();
    await page.locator('.error-box').waitFor();
    expect(await page.locator('.error-message').textContent()).toContain(message);
    await page.goto(`${server.url}/#/faults`);
    await page.locator('tr[data-rule]', { hasText: message }).waitFor();
    expect(await page.locator('main img, main b').count()).toBe(0);
    expect(await page.evaluate<unknown>('window.pwned')).toBeUndefined();
    expect(errors).toEqual([]);
  });
});
