import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { batchOptions, invoiceDir, journalFacts, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The bytes sent are the bytes hashed: a file rewritten after the plan hashed it and before its
 * send (the harness's beforeSend hook, no race) is sent as it is now, keyed by what was sent.
 * The emulator ignores Idempotency-Key, so every extract request is a charge the ledger shows.
 */

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
type Line = { file: string; status: string; document_id: string | null; results: unknown };
const lines = (stdout: string): Line[] =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

describe('a file rewritten between its plan and its send', () => {
  for (const route of ['inline', 'upload'] as const) {
    it(`${route}: is keyed by the bytes sent; the rerun pays nothing again, and the original dropped later gets its own results`, async ({
      emulator,
    }) => {
      const server = await emulator({ idempotency_key: false });
      const cwd = await invoiceDir(1);
      const path = join(cwd, 'in/doc-00.pdf');
      const original = readFileSync(path);
      // The same size (the walk's size tells nothing), padded after %%EOF, which readers ignore.
      const other = await invoicePdf(2000);
      expect(other.length).toBeLessThanOrEqual(original.length);
      const rewritten = Buffer.concat([other, Buffer.alloc(original.length - other.length, '\n')]);
      const options = batchOptions(server.url, KEY, { route, out: '-', format: 'jsonl' });

      const first = await run(cwd, ['in'], options, {
        beforeSend: (file) => {
          if (file === 'in/doc-00.pdf') writeFileSync(path, rewritten);
        },
      });
      expect(first.summary.exit_code, first.stderr).toBe(0);
      const [sent] = lines(first.stdout);
      expect(sent).toMatchObject({ file: 'in/doc-00.pdf', status: 'completed' });
      expect(first.summary.documents).toMatchObject([{ file: 'in/doc-00.pdf', sha256: sha(rewritten) }]);
      expect(JSON.stringify(sent?.results)).toContain('INV-02000');
      expect(first.stderr).toMatch(/in\/doc-00\.pdf: changed after it was read/);
      // The planned key is not completed: no fact of the original content says it was.
      expect(journalFacts(cwd).filter((f) => f.sha256 === sha(original) && f.fact === 'completed')).toEqual([]);

      const rerun = await run(cwd, ['in'], options);
      expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
      expect(lines(rerun.stdout)).toMatchObject([{ status: 'completed', document_id: sent?.document_id }]);
      expect(rerun.summary.pages_charged).toBe(0);

      // The original content, dropped later under another name: sent, with its own results.
      writeFileSync(join(cwd, 'in/original.pdf'), original);
      const later = await run(cwd, ['in/original.pdf'], options);
      expect(later.summary.exit_code, later.stderr).toBe(0);
      const [own] = lines(later.stdout);
      expect(own).toMatchObject({ status: 'completed' });
      expect(later.summary.documents).toMatchObject([{ outcome: 'completed', sha256: sha(original) }]);
      expect(own?.document_id).not.toBe(sent?.document_id);
      expect(JSON.stringify(own?.results)).toContain('INV-01000');

      const { reservesBySha } = await ledgerTotals(server.url);
      expect(Object.fromEntries(reservesBySha)).toEqual({ [sha(rewritten)]: 1, [sha(original)]: 1 });
    });
  }

  it('a file rewritten into content an earlier run completed is recorded from the journal, never charged again (a shared journal claims it first)', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(2);
    const options = batchOptions(server.url, KEY, { state: 'journal.sqlite', out: '-', format: 'jsonl' });
    const done = await run(cwd, ['in/doc-01.pdf'], options);
    expect(done.summary.exit_code, done.stderr).toBe(0);
    const [first] = lines(done.stdout);
    const completed = readFileSync(join(cwd, 'in/doc-01.pdf'));

    const r = await run(cwd, ['in/doc-00.pdf'], options, {
      beforeSend: () => writeFileSync(join(cwd, 'in/doc-00.pdf'), completed),
    });
    expect(r.summary.exit_code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/in\/doc-00\.pdf: changed after it was read/);
    expect(lines(r.stdout)).toMatchObject([
      { file: 'in/doc-00.pdf', status: 'completed', document_id: first?.document_id },
    ]);
    expect(r.summary.pages_charged).toBe(0);
    expect([...(await ledgerTotals(server.url)).reservesBySha.values()]).toEqual([1]);
  });

  it('a copy of the planned content, sent once through the file that changed, is not given what that file now holds: the rerun sends it', async ({
    emulator,
  }) => {
    const server = await emulator({ idempotency_key: false });
    const cwd = await invoiceDir(1);
    const path = join(cwd, 'in/doc-00.pdf');
    const original = readFileSync(path);
    writeFileSync(join(cwd, 'in/doc-01-copy.pdf'), original);
    const rewritten = await invoicePdf(2000);
    const options = batchOptions(server.url, KEY, { out: '-', format: 'jsonl' });

    const first = await run(cwd, ['in'], options, {
      beforeSend: (file) => {
        if (file === 'in/doc-00.pdf') writeFileSync(path, rewritten);
      },
    });
    expect(first.summary.documents).toMatchObject([
      { file: 'in/doc-00.pdf', outcome: 'completed', sha256: sha(rewritten) },
      { file: 'in/doc-01-copy.pdf', outcome: 'not_submitted', sha256: sha(original), results: null },
    ]);

    const rerun = await run(cwd, ['in'], options);
    expect(rerun.summary.exit_code, rerun.stderr).toBe(0);
    const copy = lines(rerun.stdout).find((l) => l.file === 'in/doc-01-copy.pdf');
    expect(JSON.stringify(copy?.results)).toContain('INV-01000');
    const { reservesBySha } = await ledgerTotals(server.url);
    expect(Object.fromEntries(reservesBySha)).toEqual({ [sha(rewritten)]: 1, [sha(original)]: 1 });
  });

  it('the warning shows a name with control characters escaped, never raw', async ({ emulator }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const name = 'in/scan\u001b[2J\nfake line.pdf';
    writeFileSync(join(cwd, name), await invoicePdf(5));
    const other = await invoicePdf(6);
    const r = await run(cwd, ['in'], batchOptions(server.url, KEY), {
      beforeSend: () => writeFileSync(join(cwd, name), other),
    });
    expect(r.summary.exit_code, r.stderr).toBe(0);
    expect(r.stderr).toContain('in/scan\\x1b[2J\\x0afake line.pdf: changed after it was read');
    const warning = r.stderr.split('\n').find((l) => l.includes('changed after it was read'));
    expect(warning).not.toContain('\u001b');
  });
});
