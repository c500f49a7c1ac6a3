import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EmulatorConfigInput } from '../../src/contract/index.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { ledger } from '../e2e/batch-helpers.ts';
import { makePdf } from '../helpers/pdf.ts';

/** Shared by the reliability tests: a corpus of distinct PDFs, the ledger per content, the report. */

export type Corpus = { dir: string; names: string[]; small: number; large: number; inlineMax: number };

/**
 * `n` distinct one-page invoices under `<root>/in`: every other one padded with lines so it is
 * larger than the returned `inlineMax` (pass it as --inline-max), so about half go inline and
 * half upload-and-poll. Each differs in its number, so each is its own document (sha256).
 * `mark`: a line every document carries, so that the corpora of tests sharing one serve are
 * documents of their own too (without it, the small documents of two corpora are the same).
 */
export async function makeCorpus(root: string, n: number, prefix = 'doc', mark?: string): Promise<Corpus> {
  const dir = join(root, 'in');
  mkdirSync(dir, { recursive: true });
  const smallSizes: number[] = [];
  const largeSizes: number[] = [];
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    const big = i % 2 === 1;
    const lines = [
      `Invoice Number: INV-${String(i).padStart(5, '0')}`,
      'Invoice Date: 2024-03-15',
      `Total: ${(100 + i).toFixed(2)}`,
      ...(mark === undefined ? [] : [`Reference: ${mark}`]),
    ];
    if (big)
      for (let k = 0; k < 30; k++)
        lines.push(
          `Note ${k} of ${prefix} ${i}: goods delivered as agreed, terms 30 days net, ref ${(i * 7919 + k) % 100_000}`,
        );
    const bytes = await makePdf([lines]);
    (big ? largeSizes : smallSizes).push(bytes.length);
    const name = `${prefix}-${String(i).padStart(4, '0')}.pdf`;
    writeFileSync(join(dir, name), bytes);
    names.push(name);
  }
  const inlineMax = Math.max(...smallSizes);
  if (largeSizes.length > 0 && Math.min(...largeSizes) <= inlineMax)
    throw new Error('corpus: large files are not larger than the small ones');
  return { dir, names, small: smallSizes.length, large: largeSizes.length, inlineMax };
}

/** The emulator configuration of these tests: no simulated engine time, plenty of credits. */
export function serveConfig(overrides: Partial<EmulatorConfigInput> = {}): EmulatorConfigInput {
  return { ...DEFAULT_CONFIG, credits: 1_000_000, processing: { ms_per_page: 0, concurrency: 4 }, ...overrides };
}

/** serveConfig as a file for `extract serve --config`, in `dir`. */
export function writeServeConfig(dir: string, overrides: Partial<EmulatorConfigInput> = {}): string {
  const path = join(dir, 'serve-config.json');
  writeFileSync(path, JSON.stringify(serveConfig(overrides)));
  return path;
}

/** Charges per content in the ledger: `net` is reserves minus refunds, `reserves` counts every reserve. */
export async function chargesBySha(url: string): Promise<{ net: Map<string, number>; reserves: Map<string, number> }> {
  const net = new Map<string, number>();
  const reserves = new Map<string, number>();
  for (const e of (await ledger(url)).entries) {
    if (e.sha256 === null || e.kind === 'topup') continue;
    const pages = e.kind === 'reserve' ? e.pages : -e.pages;
    net.set(e.sha256, (net.get(e.sha256) ?? 0) + pages);
    if (e.kind === 'reserve') reserves.set(e.sha256, (reserves.get(e.sha256) ?? 0) + 1);
  }
  return { net, reserves };
}

export type ReportDoc = {
  file: string;
  outcome: string;
  status: string;
  error: string | null;
  sha256: string | null;
  document_id: string | null;
  page_count: number | null;
};
export type Report = {
  exit_code: number;
  completed: number;
  failed: number;
  skipped: number;
  pending: number;
  documents: ReportDoc[];
};

export function readReport(path: string): Report {
  return JSON.parse(readFileSync(path, 'utf8')) as Report;
}

export { readJournalLines } from '../helpers/journal.ts';

export function count<T>(items: readonly T[], pick: (item: T) => boolean): number {
  return items.reduce((n, item) => n + (pick(item) ? 1 : 0), 0);
}
