import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterEachTest } from '../helpers/cleanup.ts';

// Code that runs in the page is passed as a string: the project's tsconfig has no DOM types,
// and vitest would rewrite a function's dynamic import().

/** Debian's chromium; npm test's pretest (scripts/pretest.sh) installs it when missing. */
export const CHROMIUM = process.env.EXTRACT_TEST_CHROMIUM ?? '/usr/bin/chromium';
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

const open = new Set<{ context: BrowserContext; dir: string }>();
afterEachTest(async () => {
  await Promise.all(
    [...open].map(async (o) => {
      await o.context.close().catch(() => {});
      await rm(o.dir, { recursive: true, force: true });
    }),
  );
  open.clear();
});

/**
 * A page in a fresh headless chromium (its own profile directory), closed after the test.
 * Without chromium the test fails, never skips: a green run must mean the page was tested.
 */
export async function browserPage(
  options: { width?: number; height?: number; executable?: string } = {},
): Promise<{ page: Page; errors: string[] }> {
  const executable = options.executable ?? CHROMIUM;
  if (!existsSync(executable)) {
    throw new Error(
      `chromium is not installed at ${executable}: install it (apt-get update && apt-get install -y chromium; npm test's pretest does this), or set EXTRACT_TEST_CHROMIUM to its path`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'extract-app-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: executable,
    args: ARGS,
    headless: true,
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  open.add({ context, dir });
  const page = context.pages()[0] ?? (await context.newPage());
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
