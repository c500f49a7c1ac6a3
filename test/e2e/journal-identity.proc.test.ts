import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userJournalPath } from '../../src/journal/state/user-journal.ts';
import { DEFAULT_CONFIG } from '../../src/emulator/default-config.ts';
import { cleanEnv, stateHomeIn, tempDir } from '../helpers/cli.ts';
import { defaultJournalIn, readJournalLines } from '../helpers/journal.ts';
import { extract, FIXTURES, fixtureNames, KEY, ledger, readJsonLines, serveForFile } from './batch-helpers.ts';

/**
 * Never pay twice, wherever and however the client is run, against a service that does
 * not honour Idempotency-Key (`idempotency_key: false`): every POST extract there is a new
 * document and a charge, so the ledger's reserves count what the client paid.
 */

const ROTATED_KEY = 'ext_rotated_key_of_invoices_0003';
const OTHER_KEY = 'ext_other_parser_key_0002';
const CONFIG = {
  idempotency_key: false,
  parsers: [
    { ...DEFAULT_CONFIG.parsers[0]!, api_keys: [KEY, ROTATED_KEY] },
    {
      parser_id: 'prs_other',
      parser_name: 'Other',
      api_keys: [OTHER_KEY],
      fields: [{ name: 'total', type: 'decimal' }],
    },
  ],
};
const DOCS = 2;

/** A drop folder of DOCS invoices (the `from`th DOCS of the fixtures), outside any working directory a run uses. */
function dropFolder(from = 0): string {
  const drop = join(tempDir('extract-drop-'), 'drop');
  mkdirSync(drop);
  for (const name of fixtureNames().slice(from * DOCS, (from + 1) * DOCS))
    copyFileSync(join(FIXTURES, name), join(drop, name));
  return drop;
}

/** One user: one state directory, whichever folder a run starts in. */
function userEnv(home: string, url: string, key = KEY): Record<string, string> {
  return cleanEnv({ EXTRACT_API_KEY: key, EXTRACT_BASE_URL: url, XDG_STATE_HOME: stateHomeIn(home) });
}

async function reserves(url: string): Promise<number> {
  return (await ledger(url)).entries.filter((e) => e.kind === 'reserve').length;
}

function completed(stdout: string): number {
  return readJsonLines(stdout).filter((r) => r.status === 'completed').length;
}

describe('the journal follows the user and the parser, not the shell', () => {
  // One `serve` for the tests of this config (each test has its own user, so its own journal, and
  // counts only its own charges); those that need slower processing share another.
  const service = serveForFile(CONFIG);

  it('a mistyped base URL (nothing listening, or a site that is not the service) leaves no journal behind; the service that answers gets one', async () => {
    const home = tempDir('extract-home-');
    const drop = dropFolder();
    const closed = await new Promise<string>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(`http://127.0.0.1:${port}`));
      });
    });
    const site = createServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    try {
      for (const url of [closed, siteUrl]) {
        const run = await extract(tempDir('extract-cwd-'), url, [drop, '-q'], { env: userEnv(home, url) });
        expect(run.exitCode, run.stderr).not.toBe(0);
        // Neither the journal nor its companions (the size mark, the stat cache, SQLite's own files).
        const journal = userJournalPath({ XDG_STATE_HOME: stateHomeIn(home) }, url);
        const left = existsSync(dirname(journal)) ? readdirSync(dirname(journal)) : [];
        expect(
          left.filter((f) => f.startsWith(basename(journal))),
          url,
        ).toEqual([]);
      }
    } finally {
      site.close();
    }
    const server = { url: service() };
    const good = await extract(tempDir('extract-cwd-'), server.url, [drop, '-q'], { env: userEnv(home, server.url) });
    expect(good.exitCode, good.stderr).toBe(0);
    expect(existsSync(userJournalPath({ XDG_STATE_HOME: stateHomeIn(home) }, server.url))).toBe(true);
  });

  it('a run from another working directory pays nothing for documents a run elsewhere completed', async () => {
    const server = { url: service() };
    const home = tempDir('extract-home-');
    const drop = dropFolder();
    const first = await extract(tempDir('extract-cwd-a-'), server.url, [drop, '-q'], {
      env: userEnv(home, server.url),
    });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(await reserves(server.url)).toBe(DOCS);

    const elsewhere = await extract(tempDir('extract-cwd-b-'), server.url, [drop, '-q'], {
      env: userEnv(home, server.url),
    });
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect(completed(elsewhere.stdout)).toBe(DOCS);
    expect(await reserves(server.url)).toBe(DOCS);
  });

  it('a rotated key of the same parser pays nothing; a key of another parser pays once per document, then nothing', async () => {
    const server = { url: service() };
    const home = tempDir('extract-home-');
    const drop = dropFolder();
    const cwd = tempDir('extract-cwd-');
    expect((await extract(cwd, server.url, [drop, '-q'], { env: userEnv(home, server.url) })).exitCode).toBe(0);
    expect(await reserves(server.url)).toBe(DOCS);

    const rotated = await extract(cwd, server.url, [drop], { env: userEnv(home, server.url, ROTATED_KEY) });
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    expect(rotated.stderr).toMatch(/same parser/);
    expect(completed(rotated.stdout)).toBe(DOCS);
    expect(await reserves(server.url)).toBe(DOCS);
    // Learned once: the journal says so, and the next run with that key asks the service nothing.
    const parserFacts = readJournalLines(defaultJournalIn(home)).facts.filter((f) => f.fact === 'parser');
    expect(parserFacts).toHaveLength(1);

    const other = await extract(cwd, server.url, [drop], { env: userEnv(home, server.url, OTHER_KEY) });
    expect(other.exitCode, other.stderr).toBe(0);
    // It says that the files are extracted, and paid, again.
    expect(other.stderr).toMatch(/another parser's than the key these files were extracted with before/);
    // And which parser it is, as the service's answer names it.
    expect(other.stderr).toContain('the service extracts with parser prs_other');
    expect(await reserves(server.url)).toBe(2 * DOCS);
    const byParser = (await ledger(server.url)).entries.filter((e) => e.kind === 'reserve');
    expect(byParser.length).toBe(2 * DOCS);

    const otherAgain = await extract(cwd, server.url, [drop], { env: userEnv(home, server.url, OTHER_KEY) });
    expect(otherAgain.exitCode).toBe(0);
    expect(otherAgain.stderr).not.toMatch(/another parser's/);
    expect(completed(otherAgain.stdout)).toBe(DOCS);
    const rotatedAgain = await extract(cwd, server.url, [drop, '-q'], { env: userEnv(home, server.url, ROTATED_KEY) });
    expect(completed(rotatedAgain.stdout)).toBe(DOCS);
    expect(await reserves(server.url)).toBe(2 * DOCS);
  }, 120_000); // six CLI runs in a row

  it("an earlier version's ./.extract-state.jsonl is imported once: nothing it knew is paid again, from any folder", async () => {
    const server = { url: service() };
    const home = tempDir('extract-home-');
    const drop = dropFolder();
    const old = tempDir('extract-old-cwd-');
    // What the previous default wrote: the journal in the working directory.
    const before = await extract(old, server.url, [drop, '-q', '--state', '.extract-state.jsonl'], {
      env: userEnv(home, server.url),
    });
    expect(before.exitCode, before.stderr).toBe(0);
    expect(await reserves(server.url)).toBe(DOCS);

    const upgraded = await extract(old, server.url, [drop], { env: userEnv(home, server.url) });
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expect(upgraded.stderr).toMatch(/imported the \d+ facts/);
    expect(existsSync(join(old, '.extract-state.jsonl'))).toBe(false);
    expect(existsSync(join(old, '.extract-state.jsonl.imported'))).toBe(true);
    const fromHome = await extract(home, server.url, [drop, '-q'], { env: userEnv(home, server.url) });
    expect(completed(fromHome.stdout)).toBe(DOCS);
    expect(await reserves(server.url)).toBe(DOCS);
  });

  it("the previous version's user journal (JSON Lines, beside the new one) is taken in once, with what it learned of each key", async () => {
    const server = { url: service() };
    const home = tempDir('extract-home-');
    const drop = dropFolder();
    const env = userEnv(home, server.url);
    const previous = userJournalPath(env, server.url).replace(/\.sqlite$/, '.jsonl');
    mkdirSync(dirname(previous), { recursive: true });
    expect((await extract(home, server.url, [drop, '-q', '--state', previous], { env })).exitCode).toBe(0);
    // The rotated key was tied to the parser there (one probe, a parser fact).
    const rotatedEnv = userEnv(home, server.url, ROTATED_KEY);
    expect((await extract(home, server.url, [drop, '-q', '--state', previous], { env: rotatedEnv })).exitCode).toBe(0);
    expect(await reserves(server.url)).toBe(DOCS);

    const upgraded = await extract(tempDir('extract-cwd-'), server.url, [drop], { env: rotatedEnv });
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expect(upgraded.stderr).toMatch(/imported the \d+ facts/);
    // Nothing asked again: the parser fact came along.
    expect(upgraded.stderr).not.toMatch(/same parser/);
    expect(completed(upgraded.stdout)).toBe(DOCS);
    expect(existsSync(previous)).toBe(false);
    expect(existsSync(`${previous}.imported`)).toBe(true);
    expect(await reserves(server.url)).toBe(DOCS);
  });

  it('a fact written by a newer version stops the run (exit 2, "upgrade"): nothing is sent, nothing paid again', async () => {
    const server = { url: service() };
    const cwd = tempDir('extract-cwd-');
    const drop = dropFolder();
    const env = userEnv(cwd, server.url);
    expect((await extract(cwd, server.url, [drop, '-q', '--state', 'j.jsonl'], { env })).exitCode).toBe(0);
    const journal = join(cwd, 'j.jsonl');
    // A completed fact whose route a future version writes differently.
    const lines = readFileSync(journal, 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    writeFileSync(journal, `${[...lines, JSON.stringify({ ...last, route: 'inline+ocr' })].join('\n')}\n`);
    const rerun = await extract(cwd, server.url, [drop, '--state', 'j.jsonl'], { env });
    expect(rerun.exitCode).toBe(2);
    expect(rerun.stderr).toMatch(/newer extract.*upgrade/);
    expect(rerun.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await reserves(server.url)).toBe(DOCS);
  });

  describe('runs at once', () => {
    // One slower `serve` for both (300 ms a page): the runs overlap while documents are processed.
    const slowService = serveForFile({ ...CONFIG, processing: { ms_per_page: 300, concurrency: 4 } });

    it('two runs at once on different folders do not wait for each other; two on one folder pay for each document once', async () => {
      const server = { url: slowService() };
      const home = tempDir('extract-home-');
      const env = userEnv(home, server.url);
      const [mail, scans] = [dropFolder(0), dropFolder(1)];
      const [a, b] = await Promise.all([
        extract(tempDir('extract-cwd-'), server.url, [mail, '-q', '--route', 'upload'], { env }),
        extract(tempDir('extract-cwd-'), server.url, [scans, '-q', '--route', 'upload'], { env }),
      ]);
      expect([a.exitCode, b.exitCode], `${a.stderr}${b.stderr}`).toEqual([0, 0]);
      expect(completed(a.stdout) + completed(b.stdout)).toBe(2 * DOCS);
      expect(await reserves(server.url)).toBe(2 * DOCS);

      // Both on one new folder: each document is claimed by one run; the other waits for its outcome.
      const both = dropFolder(2);
      const [c, d] = await Promise.all([
        extract(tempDir('extract-cwd-'), server.url, [both, '-q', '--route', 'upload'], { env }),
        extract(tempDir('extract-cwd-'), server.url, [both, '-q', '--route', 'upload'], { env }),
      ]);
      expect([c.exitCode, d.exitCode], `${c.stderr}${d.stderr}`).toEqual([0, 0]);
      expect(await reserves(server.url)).toBe(3 * DOCS);
      expect(completed(c.stdout) + completed(d.stdout)).toBe(2 * DOCS);
    }, 120_000);

    it('one lock per journal: two runs naming it through a symlink at once pay for each document once', async () => {
      const server = { url: slowService() };
      const cwd = tempDir('extract-cwd-');
      const drop = dropFolder();
      writeFileSync(join(cwd, 'j.jsonl'), '');
      symlinkSync(join(cwd, 'j.jsonl'), join(cwd, 'link.jsonl'));
      const env = userEnv(cwd, server.url);
      const [a, b] = await Promise.all([
        extract(cwd, server.url, [drop, '-q', '--state', 'j.jsonl'], { env }),
        extract(cwd, server.url, [drop, '-q', '--state', 'link.jsonl'], { env }),
      ]);
      expect(await reserves(server.url)).toBe(DOCS);
      // The loser is told who holds the journal, and sent nothing: exit 9 (2 is for usage errors).
      const codes = [a.exitCode, b.exitCode].sort();
      expect(codes).toEqual([0, 9]);
      expect(`${a.stderr}${b.stderr}`).toMatch(/in use by process/);
    });
  });
});
