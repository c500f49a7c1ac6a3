import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { describe, expect } from 'vitest';
import { batchOptions, invoiceDir, ledgerTotals, run } from '../batch/harness.ts';
import { KEY } from '../helpers/emulator.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it } from '../helpers/fixtures.ts';

/**
 * Archives are folders: each member of a zip or a tar is a document of its own, named
 * `archive!member`, known by its own bytes (never paid twice, one new member pays for itself),
 * bounded (a bomb fails its archive alone), and no member name reaches outside the run's part space.
 */

const done = (r: Awaited<ReturnType<typeof run>>) =>
  r.summary.documents
    .filter((d) => d.status === 'completed')
    .map((d) => d.file)
    .sort();

async function members(n: number, from = 0): Promise<Record<string, Uint8Array>> {
  const out: Record<string, Uint8Array> = {};
  for (let i = from; i < from + n; i++) out[`2026/inv-${i}.pdf`] = await invoicePdf(2000 + i);
  return out;
}

describe('archives are folders', () => {
  it('a zip: each member a document named zip!member; a rerun pays nothing; one new member pays for itself', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1);
    const zip = join(cwd, 'in', 'invoices.zip');
    writeFileSync(zip, zipSync({ ...(await members(2)), 'readme.txt': Buffer.from('for accounts\n') }));
    const options = batchOptions(server.url, KEY, { route: 'inline' });
    const first = await run(cwd, ['in/'], options);
    expect(done(first), first.stderr).toEqual([
      'in/doc-00.pdf',
      'in/invoices.zip!2026/inv-0.pdf',
      'in/invoices.zip!2026/inv-1.pdf',
    ]);
    expect(first.summary.not_documents.map((d) => d.file)).toEqual(['in/invoices.zip!readme.txt']);
    expect((await ledgerTotals(server.url)).net).toBe(3);

    const again = await run(cwd, ['in/'], options);
    expect(again.summary.pages_charged).toBe(0);
    expect((await ledgerTotals(server.url)).net).toBe(3);

    // The next night's zip holds one more member: it alone is charged.
    writeFileSync(zip, zipSync({ ...(await members(3)) }));
    const next = await run(cwd, ['in/'], options);
    expect(next.summary.pages_charged).toBe(1);
    expect(done(next)).toContain('in/invoices.zip!2026/inv-2.pdf');
    const ledger = await ledgerTotals(server.url);
    expect(ledger.net).toBe(4);
    expect([...ledger.reservesBySha.values()].every((n) => n === 1)).toBe(true);
  });

  it('a tar and a tar.gz made by tar(1): their members are documents; a symbolic link member is refused, the rest go on', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const src = join(cwd, 'src');
    mkdirSync(join(src, 'q1'), { recursive: true });
    writeFileSync(join(src, 'q1', 'a.pdf'), await invoicePdf(3001));
    writeFileSync(join(src, 'b.pdf'), await invoicePdf(3002));
    symlinkSync('/etc/passwd', join(src, 'link.pdf'));
    execFileSync('tar', ['-cf', join(cwd, 'in', 'batch.tar'), '-C', src, 'q1', 'b.pdf', 'link.pdf']);
    writeFileSync(join(src, 'c.pdf'), await invoicePdf(3003));
    execFileSync('tar', ['-czf', join(cwd, 'in', 'more.tar.gz'), '-C', src, 'c.pdf']);
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    expect(done(r), r.stderr).toEqual(['in/batch.tar!b.pdf', 'in/batch.tar!q1/a.pdf', 'in/more.tar.gz!c.pdf']);
    // Refused on this machine: failed unsent, and set aside by later runs (refused-parts.test.ts).
    const refused = r.summary.documents.filter((d) => d.outcome === 'failed');
    expect(refused.map((d) => d.file)).toEqual(['in/batch.tar!link.pdf']);
    expect(refused[0]?.error).toMatch(/a symbolic link in the archive: not followed/);
    expect(r.summary.exit_code).not.toBe(0);
  });

  it('a tar made of a folder (tar -C dir .) names its members without the leading ./', async () => {
    const cwd = await invoiceDir(0);
    const src = join(cwd, 'src');
    mkdirSync(join(src, 'q1'), { recursive: true });
    writeFileSync(join(src, 'q1', 'a.pdf'), await invoicePdf(3011));
    execFileSync('tar', ['-czf', join(cwd, 'in', 'folder.tgz'), '-C', src, '.']);
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(
      r.summary.documents.map((d) => d.file),
      r.stderr,
    ).toEqual(['in/folder.tgz!q1/a.pdf']);
  });

  it('a zip bomb is one failure of its own archive; the rest of the run goes on and nothing of it is written', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(1);
    // 80 MiB of zeros deflate to some 80 KB: a ratio no document has.
    writeFileSync(join(cwd, 'in', 'bomb.zip'), zipSync({ 'zeros.pdf': new Uint8Array(80 * 1024 * 1024) }));
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    expect(done(r)).toEqual(['in/doc-00.pdf']);
    const bomb = r.summary.documents.find((d) => d.file === 'in/bomb.zip');
    expect(bomb).toMatchObject({ outcome: 'failed', set_aside: true });
    expect(bomb?.error).toMatch(/expands to 80\.0 MiB from .*a zip bomb\?\); none of its parts was sent/);
    expect(r.summary.exit_code).not.toBe(0);
  });

  it('a zip whose directory lies about a member size is caught while it is inflated', async ({ emulator }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const zip = Buffer.from(zipSync({ 'small.pdf': new Uint8Array(20 * 1024 * 1024) }));
    // The central directory's uncompressed size (offset 24 of its entry) made 1 KiB.
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(1024, central + 24);
    writeFileSync(join(cwd, 'in', 'liar.zip'), zip);
    // A member over a MiB compressed is inflated as a stream: the same lie is caught there.
    const big = Buffer.from(zipSync({ 'big.pdf': randomBytes(3 * 1024 * 1024) }));
    big.writeUInt32LE(1024, big.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 24);
    writeFileSync(join(cwd, 'in', 'big-liar.zip'), big);
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    for (const name of ['in/liar.zip', 'in/big-liar.zip'])
      expect(r.summary.documents.find((d) => d.file === name)?.error).toMatch(
        /a member expands past the 1024 bytes the archive says it holds/,
      );
  });

  it('members named ../ or absolute, and a symbolic link member of a zip, are refused by name; nothing is written outside the part space', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const pdf = await invoicePdf(4001);
    const link = { os: 3, attrs: (0o120777 << 16) >>> 0 };
    writeFileSync(
      join(cwd, 'in', 'hostile.zip'),
      zipSync({
        '../../escaped.pdf': pdf,
        '/tmp/absolute.pdf': pdf,
        'link.pdf': [new TextEncoder().encode('/etc/passwd'), link],
        'fine.pdf': pdf,
      }),
    );
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    expect(done(r), r.stderr).toEqual(['in/hostile.zip!fine.pdf']);
    const refused = Object.fromEntries(
      r.summary.documents.filter((d) => d.outcome === 'failed').map((d) => [d.file, d.error]),
    );
    expect(Object.keys(refused).sort()).toEqual([
      'in/hostile.zip!../../escaped.pdf',
      'in/hostile.zip!/tmp/absolute.pdf',
      'in/hostile.zip!link.pdf',
    ]);
    expect(refused['in/hostile.zip!../../escaped.pdf']).toMatch(/with "\.\." .*not expanded/);
    expect(existsSync(join(cwd, 'escaped.pdf'))).toBe(false);
    expect(existsSync('/tmp/absolute.pdf')).toBe(false);
  });

  it('a member name holding a line break and a runner command is inert in the log; its record keeps the name', async ({
    emulator,
  }) => {
    const server = await emulator();
    const cwd = await invoiceDir(0);
    const name = 'evil\n::error::forged.pdf';
    writeFileSync(join(cwd, 'in', 'names.zip'), zipSync({ [name]: await invoicePdf(4101) }));
    const r = await run(cwd, ['in/'], batchOptions(server.url, KEY, { route: 'inline' }));
    expect(done(r), r.stderr).toEqual([`in/names.zip!${name}`]);
    expect(r.stderr).not.toMatch(/^::error::/m);
    expect(r.stderr).toContain('in/names.zip!evil\\x0a::error::forged.pdf');
  });

  it('10,000 members: each a part of its own (notes listed as not documents, the PDFs planned); the part space is gone after the run', async () => {
    const cwd = await invoiceDir(0);
    const many: Record<string, Uint8Array> = { 'a.pdf': await invoicePdf(5000), 'b.pdf': await invoicePdf(5001) };
    for (let i = 0; i < 9_998; i++) many[`notes/${i}.txt`] = Buffer.from(`note ${i}\n`);
    writeFileSync(join(cwd, 'in', 'many.zip'), zipSync(many, { level: 1 }));
    const r = await run(cwd, ['in/'], batchOptions('http://127.0.0.1:9', KEY, { dryRun: true }));
    expect(r.summary.documents.filter((d) => d.outcome === 'planned').map((d) => d.file)).toEqual([
      'in/many.zip!a.pdf',
      'in/many.zip!b.pdf',
    ]);
    expect(r.summary.not_documents).toHaveLength(9_998);
    expect(partSpaces()).toEqual([]);
  }, 300_000);
});

/** The part spaces of runs in this process (the in-process runs'), left in the temp directory. */
function partSpaces(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith(`extract-parts-${process.pid}-`));
}
