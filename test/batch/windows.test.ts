import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { KEY } from '../helpers/emulator.ts';
import { batchOptions, invoiceDir, ledgerTotals, run } from './harness.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * The plan takes the batch a window at a time and keeps each job on disk. A
 * copy of a document planned in a later window than the document itself is still sent once
 * (the copy index spans the batch), every input keeps its record, in input order, and a rerun
 * pays nothing. Windows of two files make a batch of six cross three of them.
 */

const records = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { file: string; status: string; document_id: string | null });

describe('the plan in windows', () => {
  it('copies across windows are sent once, each input is recorded in input order, and a rerun pays nothing', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(4);
    // In input order: doc-00, doc-01, doc-01b (a copy of doc-01, the next window), doc-02, doc-03, z-copy (of doc-00, the last window).
    copyFileSync(join(cwd, 'in/doc-01.pdf'), join(cwd, 'in/doc-01b.pdf'));
    copyFileSync(join(cwd, 'in/doc-00.pdf'), join(cwd, 'in/z-copy.pdf'));
    const options = batchOptions(server.url, KEY, { out: '-', format: 'jsonl' });
    const first = await run(cwd, ['in'], options, { planWindow: 2 });
    expect(first.summary.exit_code, first.stderr).toBe(0);
    const out = records(first.stdout);
    const byName = new Map(out.map((r) => [r.file.split('/').at(-1), r]));
    expect(out.map((r) => r.status)).toEqual(Array(6).fill('completed'));
    expect(byName.get('doc-01b.pdf')?.document_id).toBe(byName.get('doc-01.pdf')?.document_id);
    expect(byName.get('z-copy.pdf')?.document_id).toBe(byName.get('doc-00.pdf')?.document_id);
    const charged = await ledgerTotals(server.url);
    // Four contents, each reserved once: the two copies cost nothing.
    expect([...charged.reservesBySha.values()]).toEqual([1, 1, 1, 1]);
    expect(first.summary.pages_charged).toBe(4);

    const again = await run(cwd, ['in'], { ...options, out: join(cwd, 'out.json'), format: 'json' }, { planWindow: 2 });
    expect(again.summary.exit_code, again.stderr).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(charged.net);
    const written = (await import('node:fs')).readFileSync(join(cwd, 'out.json'), 'utf8');
    const names = (JSON.parse(written) as Array<{ file: string; document_id: string }>).map((r) =>
      r.file.split('/').at(-1),
    );
    expect(names).toEqual(['doc-00.pdf', 'doc-01.pdf', 'doc-01b.pdf', 'doc-02.pdf', 'doc-03.pdf', 'z-copy.pdf']);
  });
});
