import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { describe, expect } from 'vitest';
import { it } from '../helpers/fixtures.ts';
import { stateHomeIn, tempDir } from '../helpers/cli.ts';
import { deployedStandIn } from '../helpers/deployed-stand-in.ts';
import { drawnPdf, type PdfLock } from '../helpers/pdf.ts';
import { extract, ledger, serveForFile } from './batch-helpers.ts';

/**
 * Pages and splits cut on this machine, locked PDFs unlocked on it (src/pdf/): the built CLI
 * against the emulator, whose ledger charges the pages of what it was sent.
 */
type Report = {
  exit_code: number;
  known_failures: number;
  documents: Array<{ file: string; outcome: string; status: string; page_count?: number | null; error?: string }>;
};

/** `n` invoice pages (`blank`: these pages left empty), numbered from `first`. */
function pages(n: number, blank: number[] = [], first = 1): Array<{ lines?: string[] }> {
  return Array.from({ length: n }, (_, i) =>
    blank.includes(i + 1)
      ? {}
      : { lines: [`Invoice Number: INV-${String(first + i).padStart(5, '0')}`, 'Total: 10.00'] },
  );
}

function report(cwd: string): Report {
  return JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as Report;
}

/** Every file under a folder, read as latin1 (the journal, the stat cache, the outputs, the report). */
function everyFileText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dir, name);
    if (statSync(path).isFile()) text += readFileSync(path).toString('latin1');
  }
  return text;
}

const url = serveForFile();

describe('--pages: only the pages asked for are sent, cut here, and charged', () => {
  it('--dry-run shows the pages after the cut; the ledger charges the selection; a rerun pays nothing; another selection is a new document', async () => {
    const cwd = tempDir('extract-pages-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'contract.pdf'), await drawnPdf(pages(6)));

    const dry = await extract(cwd, url(), ['in/', '--pages', '1-2,last', '--dry-run']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/3 pages\s+in\/contract\.pdf#pages=1-2,6/);
    expect(dry.stdout).toMatch(/total\s+3 credits/);
    expect((await ledger(url())).entries).toEqual([]);

    const first = await extract(cwd, url(), ['in/', '--pages', '1-2,last', '-q', '--report', 'report.json']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(report(cwd).documents).toMatchObject([
      { file: 'in/contract.pdf#pages=1-2,6', status: 'completed', page_count: 3 },
    ]);
    const reserves = () => ledger(url()).then((l) => l.entries.filter((e) => e.kind === 'reserve'));
    expect((await reserves()).map((e) => e.pages)).toEqual([3]);

    // The same selection, however written: found in the journal, nothing sent.
    const again = await extract(cwd, url(), ['in/', '--pages', '1,2,6', '-q', '--report', 'report.json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(report(cwd).documents).toMatchObject([{ file: 'in/contract.pdf#pages=1-2,6', status: 'completed' }]);
    expect(await reserves()).toHaveLength(1);

    const other = await extract(cwd, url(), ['in/', '--pages', '1', '-q', '--report', 'report.json']);
    expect(other.exitCode, other.stderr).toBe(0);
    expect((await reserves()).map((e) => e.pages)).toEqual([3, 1]);
  });

  it('a rerun of the same selection sends nothing: POSTs counted at a service that ignores Idempotency-Key', async ({
    httpServer,
  }) => {
    const names: string[] = [];
    const service = await deployedStandIn(httpServer, { onExtract: (name) => names.push(name) });
    const cwd = tempDir('extract-pages-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'contract.pdf'), await drawnPdf(pages(3, [], 600)));
    for (const night of [1, 2, 3]) {
      const r = await extract(cwd, service.url, ['in/', '--split', 'every:2', '-q', '--report', 'report.json']);
      expect(r.exitCode, `night ${night}: ${r.stderr}`).toBe(0);
    }
    expect(report(cwd).documents.map((d) => [d.file, d.outcome])).toEqual([
      ['in/contract.pdf#pages=1-2', 'skipped'],
      ['in/contract.pdf#pages=3', 'skipped'],
    ]);
    expect(service.requests.get('POST /api/v1/extract')).toBe(2);
    expect([...service.posts.values()]).toEqual([1, 1]);
    // The service is told the file's own name, its extension kept.
    expect(names).toEqual(['contract.pdf', 'contract.pdf']);
  });

  it('--max-credits counts the pages after the cut: three 4-page files at --pages 1 fit in 3 credits', async () => {
    const cwd = tempDir('extract-pages-');
    mkdirSync(join(cwd, 'in'));
    // 12 pages in all, 3 once cut: the run fits in 3 credits only if it counts after the cut.
    for (const n of [1, 2, 3]) writeFileSync(join(cwd, 'in', `c${n}.pdf`), await drawnPdf(pages(4, [], n * 10)));
    const r = await extract(cwd, url(), ['in/', '--pages', '1', '--max-credits', '3', '-q', '--report', 'report.json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report(cwd).documents.map((d) => d.status)).toEqual(['completed', 'completed', 'completed']);
    const charged = (await ledger(url())).entries.filter((e) => e.kind === 'reserve');
    expect(charged.map((e) => e.pages)).toEqual([1, 1, 1]);
  });
});

describe('--pages that selects every page of a file', () => {
  it('sends the file as it is, under its own name: a file sent whole before pays nothing (--pages 1 of a one-page invoice)', async () => {
    const cwd = tempDir('extract-pages-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'one.pdf'), await drawnPdf(pages(1, [], 700)));
    writeFileSync(join(cwd, 'in', 'three.pdf'), await drawnPdf(pages(3, [], 710)));
    const whole = await extract(cwd, url(), ['in/', '-q']);
    expect(whole.exitCode, whole.stderr).toBe(0);
    const reserves = () => ledger(url()).then((l) => l.entries.filter((e) => e.kind === 'reserve'));
    expect((await reserves()).map((e) => e.pages).sort()).toEqual([1, 3]);

    const cut = await extract(cwd, url(), ['in/', '--pages', '1-3', '-q', '--report', 'report.json']);
    expect(cut.exitCode, cut.stderr).toBe(0);
    expect(report(cwd).documents.map((d) => [d.file, d.outcome])).toEqual([
      ['in/one.pdf', 'skipped'],
      ['in/three.pdf', 'skipped'],
    ]);
    expect(await reserves()).toHaveLength(2);
  });
});

describe('--split: one file, several documents', () => {
  it('every:2 makes parts of two pages; blank splits at pages with no text and no image; each charged its own pages', async () => {
    const cwd = tempDir('extract-split-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'batch.pdf'), await drawnPdf(pages(5)));
    writeFileSync(join(cwd, 'in', 'scan.pdf'), await drawnPdf(pages(6, [2, 5], 100)));

    const every = await extract(cwd, url(), ['in/batch.pdf', '--split', 'every:2', '-q', '--report', 'report.json']);
    expect(every.exitCode, every.stderr).toBe(0);
    expect(report(cwd).documents.map((d) => [d.file, d.page_count])).toEqual([
      ['in/batch.pdf#pages=1-2', 2],
      ['in/batch.pdf#pages=3-4', 2],
      ['in/batch.pdf#pages=5', 1],
    ]);

    const blank = await extract(cwd, url(), ['in/scan.pdf', '--split', 'blank', '-q', '--report', 'report.json']);
    expect(blank.exitCode, blank.stderr).toBe(0);
    expect(report(cwd).documents.map((d) => [d.file, d.page_count])).toEqual([
      ['in/scan.pdf#pages=1', 1],
      ['in/scan.pdf#pages=3-4', 2],
      ['in/scan.pdf#pages=6', 1],
    ]);
    const charged = (await ledger(url())).entries.filter((e) => e.kind === 'reserve');
    expect(charged.map((e) => e.pages).sort()).toEqual([1, 1, 1, 2, 2, 2]);
  });

  it('a bad --pages or --split is refused before anything is sent (exit 2, the form to write); a selection past the end sends nothing', async () => {
    const cwd = tempDir('extract-split-');
    writeFileSync(join(cwd, 'a.pdf'), await drawnPdf(pages(2)));
    const pagesBad = await extract(cwd, url(), ['a.pdf', '--pages', '3-1']);
    expect(pagesBad.exitCode).toBe(2);
    expect(pagesBad.stderr).toMatch(/--pages "3-1": the range 3-1 runs backwards: write 1-3/);
    const splitBad = await extract(cwd, url(), ['a.pdf', '--split', 'pages']);
    expect(splitBad.exitCode).toBe(2);
    expect(splitBad.stderr).toMatch(/write every:N/);
    const none = await extract(cwd, url(), ['a.pdf', '--pages', '5-last']);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toMatch(/a\.pdf: --pages 5-last selects none of its 2 pages; not sent/);
    expect((await ledger(url())).entries).toEqual([]);
  });
});

describe('cut parts of other parts, and --move-done', () => {
  it("a zip's PDFs are cut too (a.zip!b.pdf#pages=1); a file moves once every part of it is done", async () => {
    const cwd = tempDir('extract-parts-');
    mkdirSync(join(cwd, 'in'));
    const zip = zipSync({
      'a.pdf': new Uint8Array(await drawnPdf(pages(3, [], 200))),
      'b.pdf': new Uint8Array(await drawnPdf(pages(3, [], 300))),
    });
    writeFileSync(join(cwd, 'in', 'batch.zip'), zip);
    mkdirSync(join(cwd, 'done'));
    writeFileSync(join(cwd, 'in', 'scan.pdf'), await drawnPdf(pages(4, [], 400)));
    const r = await extract(cwd, url(), [
      'in/',
      '--pages',
      '1-2',
      '--split',
      'every:1',
      '--move-done',
      'done/',
      '-q',
      '--report',
      'report.json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report(cwd).documents.map((d) => [d.file, d.status])).toEqual([
      ['in/batch.zip!a.pdf#pages=1', 'completed'],
      ['in/batch.zip!a.pdf#pages=2', 'completed'],
      ['in/batch.zip!b.pdf#pages=1', 'completed'],
      ['in/batch.zip!b.pdf#pages=2', 'completed'],
      ['in/scan.pdf#pages=1', 'completed'],
      ['in/scan.pdf#pages=2', 'completed'],
    ]);
    expect((await ledger(url())).entries.filter((e) => e.kind === 'reserve').map((e) => e.pages)).toEqual([
      1, 1, 1, 1, 1, 1,
    ]);
    expect(existsSync(join(cwd, 'done', 'batch.zip'))).toBe(true);
    expect(existsSync(join(cwd, 'done', 'scan.pdf'))).toBe(true);
    expect(readdirSync(join(cwd, 'in'))).toEqual([]);
  });
});

describe('locked PDFs', () => {
  const LOCK: PdfLock = { userPassword: 'Zq7-statement-pw', ownerPassword: 'Zq7-owner-pw', pdfVersion: '1.7ext3' };

  it('--password-file: unlocked here and sent unlocked; the password is in no output, record, report or journal', async () => {
    const cwd = tempDir('extract-locked-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'statement.pdf'), await drawnPdf(pages(2), LOCK));
    writeFileSync(join(cwd, 'passwords.txt'), 'not-this-one\nZq7-statement-pw\n', { mode: 0o600 });
    const r = await extract(cwd, url(), [
      'in/',
      '--password-file',
      'passwords.txt',
      '-v',
      '-o',
      'out.jsonl',
      '--report',
      'report.json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report(cwd).documents).toMatchObject([{ file: 'in/statement.pdf', status: 'completed', page_count: 2 }]);
    // The engine (pdfjs) read it: it was sent unlocked.
    expect((await ledger(url())).entries.filter((e) => e.kind === 'reserve').map((e) => e.pages)).toEqual([2]);
    const everything = `${r.stdout}${r.stderr}${everyFileText(join(cwd, 'in'))}${readFileSync(join(cwd, 'out.jsonl'), 'latin1')}${readFileSync(join(cwd, 'report.json'), 'latin1')}${everyFileText(stateHomeIn(cwd))}`;
    expect(everything).not.toContain('Zq7');
  });

  it('locked only against editing (an empty open password), no password file: sent as it is, and read', async () => {
    const cwd = tempDir('extract-locked-');
    mkdirSync(join(cwd, 'in'));
    const lock: PdfLock = { userPassword: '', ownerPassword: 'Zq7-owner-pw', pdfVersion: '1.7' };
    writeFileSync(join(cwd, 'in', 'printable.pdf'), await drawnPdf(pages(2, [], 700), lock));
    const r = await extract(cwd, url(), ['in/', '-q', '--report', 'report.json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report(cwd).documents).toMatchObject([{ file: 'in/printable.pdf', status: 'completed', page_count: 2 }]);
  });

  it("the config store's password_file unlocks a run given no --password-file", async () => {
    const cwd = tempDir('extract-locked-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'statement.pdf'), await drawnPdf(pages(3, [], 500), LOCK));
    writeFileSync(join(cwd, 'pw.txt'), 'Zq7-statement-pw\n', { mode: 0o600 });
    const set = await extract(cwd, url(), ['config', 'set', 'password_file', join(cwd, 'pw.txt')]);
    expect(set.exitCode, set.stderr).toBe(0);
    const r = await extract(cwd, url(), ['in/', '-q', '--report', 'report.json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(report(cwd).documents).toMatchObject([{ file: 'in/statement.pdf', status: 'completed', page_count: 3 }]);
  });

  it('no password file: failed once, unsent, "encrypted: give --password-file"; the next night left aside, still unsent', async ({
    httpServer,
  }) => {
    const service = await deployedStandIn(httpServer);
    const cwd = tempDir('extract-locked-');
    mkdirSync(join(cwd, 'in'));
    writeFileSync(join(cwd, 'in', 'statement.pdf'), await drawnPdf(pages(1), LOCK));
    const night1 = await extract(cwd, service.url, ['in/', '-q', '--report', 'report.json']);
    expect(night1.exitCode).toBe(1);
    expect(night1.stderr).toMatch(/encrypted: give --password-file/);
    expect(report(cwd).documents).toMatchObject([
      {
        file: 'in/statement.pdf',
        outcome: 'failed',
        status: 'error',
        error: expect.stringMatching(/^encrypted: give --password-file/),
      },
    ]);
    const night2 = await extract(cwd, service.url, ['in/', '-q', '--report', 'report.json']);
    expect(night2.exitCode, night2.stderr).toBe(0);
    expect(night2.stderr).toBe('');
    expect(report(cwd)).toMatchObject({
      known_failures: 1,
      documents: [{ file: 'in/statement.pdf', outcome: 'left' }],
    });
    // Said without -q: set aside, and the way out for a locked PDF is its password, not the service.
    const night3 = await extract(cwd, service.url, ['in/']);
    expect(night3.exitCode, night3.stderr).toBe(0);
    expect(night3.stderr).toMatch(
      /failed in an earlier run in a way that fails again \(the service judged it, or no password opened it\)/,
    );
    expect(service.posts.size).toBe(0);
    expect(service.requests.get('POST /api/v1/extract') ?? 0).toBe(0);
  });
});
