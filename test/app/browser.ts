import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { it as withServers } from '../helpers/fixtures.ts';

// Code that runs in the page is passed as a string: the project's tsconfig has no DOM types,
// and vitest would rewrite a function's dynamic import().

/**
 * Debian's chromium-headless-shell: Blink and V8 as in chromium, without the browser around them
 * (chromium's own --headless runs the whole browser), so the same tests cost a fraction of
 * chromium's CPU. npm test's pretest
 * (scripts/pretest.sh) installs it when missing; EXTRACT_TEST_CHROMIUM names another chromium.
 */
export const CHROMIUM = process.env.EXTRACT_TEST_CHROMIUM ?? '/usr/bin/chromium-headless-shell';
export const SCREENSHOTS = 'test-output/screenshots';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

type PageOptions = { width?: number; height?: number; executable?: string };
export type BrowserPage = (options?: PageOptions) => Promise<{ page: Page; errors: string[] }>;

/**
 * The app tests' `it`: test/helpers/fixtures.ts's, plus `browserPage`. One chromium per test
 * file (the file-scoped `browsers` fixture), launched at the first browserPage() and closed after
 * the file's last test: a launch costs 1-2 CPU-seconds, a context a small fraction of that. Each
 * test still gets a fresh context (its own storage, cookies, permissions and viewport), closed
 * after it.
 */
export const it = withServers
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its first argument's pattern
  .extend('browsers', { scope: 'file' }, async ({}, { onCleanup }) => {
    const browsers = new Map<string, Promise<Browser>>();
    onCleanup(async () => {
      const all = [...browsers.values()];
      browsers.clear();
      await Promise.all(all.map(async (b) => (await b.catch(() => undefined))?.close().catch(() => {})));
    });
    return browsers;
  })
  .extend('browserPage', async ({ browsers }, { onCleanup }): Promise<BrowserPage> => {
    const contexts = new Set<BrowserContext>();
    onCleanup(async () => {
      await Promise.all([...contexts].map((c) => c.close().catch(() => {})));
    });
    return (options) => browserPage(browsers, contexts, options);
  });

function browserAt(browsers: Map<string, Promise<Browser>>, executable: string): Promise<Browser> {
  let browser = browsers.get(executable);
  if (browser === undefined) {
    browser = chromium.launch({ executablePath: executable, args: ARGS, headless: true });
    // A failed launch is not kept: the next test tries again, and fails with its own error.
    browser.catch(() => browsers.delete(executable));
    browsers.set(executable, browser);
  }
  return browser;
}

/**
 * A page in a fresh context of the file's headless chromium (its context added to `contexts`).
 * Without chromium the test fails, never skips: a green run must mean the page was tested.
 */
async function browserPage(
  browsers: Map<string, Promise<Browser>>,
  contexts: Set<BrowserContext>,
  options: PageOptions = {},
): Promise<{ page: Page; errors: string[] }> {
  const executable = options.executable ?? CHROMIUM;
  if (!existsSync(executable)) {
    throw new Error(
      `chromium is not installed at ${executable}: install it (apt-get update && apt-get install -y chromium-headless-shell; npm test's pretest does this), or set EXTRACT_TEST_CHROMIUM to another chromium's path`,
    );
  }
  let browser = await browserAt(browsers, executable);
  if (!browser.isConnected()) {
    // It crashed or was closed under an earlier test: this test gets a new one.
    browsers.delete(executable);
    browser = await browserAt(browsers, executable);
  }
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  contexts.add(context);
  const page = await context.newPage();
  // Any script error or failed request in the page fails the test that looks at `errors`.
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
  });
  return { page, errors };
}

/**
 * Saves a screenshot as test-output/screenshots/<name>.png, for a person to look at: the whole
 * page, or (`fullPage: false`) the window as the user sees it, sticky parts where they stick.
 */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  // Toasts are momentary; the picture is of the view.
  await page.evaluate("document.getElementById('toasts')?.replaceChildren()");
  await page.screenshot({ path, fullPage, animations: 'disabled' });
  return path;
}
