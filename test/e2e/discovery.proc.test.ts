import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import {
  extract,
  FIXTURES,
  fixtureNames,
  ledger,
  readJsonLines,
  reservesBySha,
  serveForFile,
} from './batch-helpers.ts';

/**
 * Discovery against a service that ignores Idempotency-Key (every POST extract is a charge):
 * every file of a folder is seen, whatever bytes name it; a walk stays in its tree; a folder
 * with nothing in it is a quiet night, not an error.
 */

const fixture = (i: number): Buffer => readFileSync(join(FIXTURES, fixtureNames()[i]!));

/** A name made of bytes, some of them not UTF-8 (Latin-1, as Windows shares and old scanners write). */
const bytesName = (dir: string, ...parts: Array<string | number>): Buffer =>
  Buffer.concat([
    Buffer.from(`${dir}/`),
    ...parts.map((p) => (typeof p === 'number' ? Buffer.from([p]) : Buffer.from(p))),
  ]);

/** A working directory holding an empty drop/. */
function dropDir(): { cwd: string; drop: string } {
  const cwd = tempDir('extract-discovery-');
  const drop = join(cwd, 'drop');
  mkdirSync(drop);
  return { cwd, drop };
}

const charged = async (url: string): Promise<number> =>
  [...(await reservesBySha(url)).values()].reduce((sum, n) => sum + n, 0);

// One `serve` for the file's tests (a start each was most of a short test); each counts only its own charges.
const service = serveForFile({ idempotency_key: false });

describe('every file in a folder is seen', () => {
  it('Latin-1 names are read, sent once each and recorded under a printable name; the rerun pays nothing', async () => {
    const url = service();
    const { cwd, drop } = dropDir();
    writeFileSync(bytesName(drop, 'Rechnung_M', 0xfc, 'ller.pdf'), fixture(0));
    writeFileSync(bytesName(drop, 'Facture_Soci', 0xe9, 't', 0xe9, '.pdf'), fixture(1));
    writeFileSync(join(drop, 'plain.pdf'), fixture(2));

    const run = await extract(cwd, url, ['drop/', '--poll-interval', '100ms']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('found 3 files');
    // Streamed records come as documents end: sorted here.
    const records = readJsonLines(String(run.stdout));
    expect(records.map((r) => [r.file, r.status]).sort()).toEqual([
      ['drop/Facture_Société.pdf', 'completed'],
      ['drop/Rechnung_Müller.pdf', 'completed'],
      ['drop/plain.pdf', 'completed'],
    ]);
    expect([...(await reservesBySha(url)).values()]).toEqual([1, 1, 1]);
    expect(await charged(url)).toBe(3);
    // The service is told the printable name.
    const names = (await ledger(url)).entries.filter((e) => e.kind === 'reserve').map((e) => e.file_name);
    expect(names.sort()).toEqual(['Facture_Société.pdf', 'Rechnung_Müller.pdf', 'plain.pdf']);

    // The rerun finds them again (through the stat cache) and charges nothing.
    const rerun = await extract(cwd, url, ['drop/']);
    expect(rerun.exitCode, rerun.stderr).toBe(0);
    expect(readJsonLines(String(rerun.stdout)).map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
    expect(await charged(url)).toBe(3);
  });

  it('a stdin list naming Latin-1 files (find … | extract -) reads them as listed', async () => {
    const url = service();
    const { cwd, drop } = dropDir();
    const latin = bytesName(drop, 'Rechnung_M', 0xfc, 'ller.pdf');
    writeFileSync(latin, fixture(0));
    writeFileSync(join(drop, 'plain.pdf'), fixture(2));
    const list = Buffer.concat([latin, Buffer.from('\n'), Buffer.from(join(drop, 'plain.pdf')), Buffer.from('\n')]);

    const run = await extract(cwd, url, ['-'], { input: list });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(
      readJsonLines(String(run.stdout))
        .map((r) => [r.file, r.status])
        .sort(),
    ).toEqual([
      [join(drop, 'Rechnung_Müller.pdf'), 'completed'],
      [join(drop, 'plain.pdf'), 'completed'],
    ]);
    expect(await charged(url)).toBe(2);
  });

  it('a folder or file that cannot be read is reported by name, the run exits 1, the rest are sent', async () => {
    const url = service();
    const { cwd, drop } = dropDir();
    writeFileSync(join(drop, 'plain.pdf'), fixture(0));
    writeFileSync(join(drop, 'locked.pdf'), fixture(1));
    mkdirSync(join(drop, 'closed'));
    writeFileSync(join(drop, 'closed', 'inside.pdf'), fixture(2));
    symlinkSync(join(drop, 'gone.pdf'), join(drop, 'dangling.pdf'));
    chmodSync(join(drop, 'locked.pdf'), 0o000);
    chmodSync(join(drop, 'closed'), 0o000);
    // Root reads anything: run the client as nobody, so that permission denied is real.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      chmodSync(cwd, 0o755);
      for (const dir of [cwd, drop, join(drop, 'plain.pdf'), join(drop, 'locked.pdf'), join(drop, 'closed')])
        chownSync(dir, 65534, 65534);
    }

    const run = await extract(cwd, url, ['drop/', '--report', 'report.json'], asRoot ? { uid: 65534 } : {});
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/drop\/locked\.pdf.*permission denied/);
    expect(run.stderr).toMatch(/drop\/closed.*permission denied/);
    expect(run.stderr).toMatch(/drop\/dangling\.pdf/);
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
      documents: Array<{ file: string; outcome: string }>;
    };
    expect(report.documents.map((d) => [d.file, d.outcome]).sort()).toEqual([
      ['drop/closed', 'unreadable'],
      ['drop/dangling.pdf', 'unreadable'],
      ['drop/locked.pdf', 'unreadable'],
      ['drop/plain.pdf', 'completed'],
    ]);
    expect(await charged(url)).toBe(1);
  });
});

describe('a directory walk stays in its tree', () => {
  /** drop/ with one file of its own, a link inside the tree, and links to a file and a folder outside it. */
  function linkedDrop(): { cwd: string; drop: string; outside: string } {
    const { cwd, drop } = dropDir();
    const outside = tempDir('extract-outside-');
    writeFileSync(join(outside, 'shadow.pdf'), fixture(1));
    mkdirSync(join(outside, 'folder'));
    writeFileSync(join(outside, 'folder', 'far.pdf'), fixture(2));
    mkdirSync(join(drop, 'sub'));
    writeFileSync(join(drop, 'sub', 'own.pdf'), fixture(0));
    symlinkSync(join(drop, 'sub', 'own.pdf'), join(drop, 'alias.pdf'));
    symlinkSync(join(outside, 'shadow.pdf'), join(drop, 'shadow.pdf'));
    symlinkSync(join(outside, 'folder'), join(drop, 'elsewhere'));
    return { cwd, drop, outside };
  }

  it('links that leave the folder are left out, said in one line and listed in --report; links inside it still work', async () => {
    const url = service();
    const { cwd } = linkedDrop();
    const run = await extract(cwd, url, ['drop/', '--report', 'report.json']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/left out 2 symbolic links that lead outside drop\/.*--follow-links/);
    expect(readJsonLines(String(run.stdout)).map((r) => r.file)).toEqual(['drop/alias.pdf']);
    const report = JSON.parse(readFileSync(join(cwd, 'report.json'), 'utf8')) as {
      links_not_followed: Array<{ file: string; reason: string }>;
    };
    expect(report.links_not_followed.map((l) => l.file)).toEqual(['drop/elsewhere', 'drop/shadow.pdf']);
    expect(report.links_not_followed.every((l) => l.reason.includes('--follow-links'))).toBe(true);
    expect(await charged(url)).toBe(1);
  });

  it('--follow-links follows them; a link named by itself is read as given', async () => {
    const url = service();
    const { cwd } = linkedDrop();
    const named = await extract(cwd, url, ['drop/shadow.pdf']);
    expect(named.exitCode, named.stderr).toBe(0);
    expect(await charged(url)).toBe(1);

    const followed = await extract(cwd, url, ['drop/', '--follow-links']);
    expect(followed.exitCode, followed.stderr).toBe(0);
    expect(followed.stderr).not.toContain('left out');
    // Streamed records come as they end: the one completed earlier first.
    expect(
      readJsonLines(String(followed.stdout))
        .map((r) => r.file)
        .sort(),
    ).toEqual(['drop/alias.pdf', 'drop/elsewhere/far.pdf', 'drop/shadow.pdf']);
    expect(await charged(url)).toBe(3);
  });

  it('a pattern stays under its folder too', async () => {
    const url = service();
    const { cwd } = linkedDrop();
    const run = await extract(cwd, url, ['drop/**/*.pdf']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/left out 2 symbolic links that lead outside drop\//);
    expect(readJsonLines(String(run.stdout)).map((r) => r.file)).toEqual(['drop/alias.pdf']);
    expect(await charged(url)).toBe(1);
  });
});

describe('a quiet night is a success', () => {
  it('an empty folder: exit 0, an empty output in each format, one line saying so, nothing charged', async () => {
    const url = service();
    const { cwd } = dropDir();
    // What each writer writes for no records: JSON an empty array, CSV its header alone.
    const expected: Record<string, string> = {
      'r.json': '[]\n',
      'r.jsonl': '',
      'r.csv': 'file,document_id,status,page_count,error,needs_review\n',
    };
    for (const out of Object.keys(expected)) {
      const run = await extract(cwd, url, ['drop/', '-o', out]);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/nothing to do: drop\/ holds no files/);
      expect(run.stderr).not.toMatch(/error|found 0/);
      expect(readFileSync(join(cwd, out), 'utf8')).toBe(expected[out]);
    }
    const stdout = await extract(cwd, url, ['drop/']);
    expect(stdout.exitCode, stdout.stderr).toBe(0);
    expect(String(stdout.stdout)).toBe('');
    expect(await charged(url)).toBe(0);
  });

  it('an empty stdin list (find … -newer last-run | extract -): exit 0, empty output', async () => {
    const url = service();
    const { cwd } = dropDir();
    const run = await extract(cwd, url, ['-', '-o', 'r.json'], { input: '' });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/nothing to do: the list on standard input was empty/);
    expect(readFileSync(join(cwd, 'r.json'), 'utf8')).toBe('[]\n');
  });

  it('a pattern or a path that names nothing is still exit 2', async () => {
    const url = service();
    const { cwd } = dropDir();
    for (const input of ['drop/*.pdf', 'missing/', 'missing.pdf']) {
      const run = await extract(cwd, url, [input]);
      expect(run.exitCode, `${input}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('no input file matched');
    }
    expect(readdirSync(cwd)).not.toContain('r.json');
  });

  it('a folder whose files are all hidden is empty too; a folder with documents is not touched by the rule', async () => {
    const url = service();
    const { cwd, drop } = dropDir();
    writeFileSync(join(drop, '.partial.pdf'), fixture(0));
    const run = await extract(cwd, url, ['drop/']);
    expect(run.exitCode, run.stderr).toBe(0);
    cpSync(join(FIXTURES, fixtureNames()[0]!), join(drop, 'a.pdf'));
    const next = await extract(cwd, url, ['drop/']);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.stderr).toContain('found 1 file');
    expect(await charged(url)).toBe(1);
  });
});
