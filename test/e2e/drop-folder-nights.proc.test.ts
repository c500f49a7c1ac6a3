import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { it, extract, reservesBySha } from './batch-helpers.ts';

type Report = {
  exit_code: number;
  known_failures: number;
  documents: Array<{ file: string; outcome: string; set_aside?: boolean; status: string }>;
};

/**
 * A drop folder run by cron for seven nights (the built CLI, a clean environment, no TTY, -q,
 * --report), two new invoices each night and one corrupt file on night 2: the night that meets it
 * fails (exit 1) and says so; every later night lists it, set aside, exits 0 and prints nothing.
 */
describe('a drop folder over seven nights', () => {
  it('one corrupt file on night 2: exit codes 0,1,0,0,0,0,0, the report lists it every night after, -q silent when nothing is new', async ({
    serve,
  }) => {
    const { url } = await serve({ idempotency_key: false });
    const cwd = tempDir('extract-nights-');
    const drop = join(cwd, 'drop');
    mkdirSync(drop);
    const codes: number[] = [];
    for (let night = 1; night <= 7; night++) {
      for (const k of [0, 1]) writeFileSync(join(drop, `n${night}-${k}.pdf`), await invoicePdf(night * 10 + k));
      if (night === 2) writeFileSync(join(drop, 'corrupt.pdf'), '%PDF-1.4\n1 0 obj\n<< /Type /Catalog');
      const r = await extract(cwd, url, ['drop/', '-q', '--report', 'last-run.json', '-o', 'out.jsonl']);
      codes.push(r.exitCode ?? -1);
      const report = JSON.parse(readFileSync(join(cwd, 'last-run.json'), 'utf8')) as Report;
      expect(report.exit_code).toBe(r.exitCode);
      const corrupt = report.documents.find((d) => d.file === 'drop/corrupt.pdf');
      if (night === 1) {
        expect(corrupt).toBeUndefined();
        expect(r.stderr).toBe('');
      } else if (night === 2) {
        expect(corrupt).toMatchObject({ outcome: 'failed', status: 'error', set_aside: true });
        expect(r.stderr).toMatch(/corrupt\.pdf/);
      } else {
        expect(corrupt, `night ${night}`).toMatchObject({ outcome: 'left', status: 'error', set_aside: true });
        expect(report.known_failures).toBe(1);
        expect(r.stderr, `night ${night}`).toBe('');
      }
      expect(report.documents.filter((d) => d.status === 'completed')).toHaveLength(night * 2);
    }
    expect(codes).toEqual([0, 1, 0, 0, 0, 0, 0]);
    // The service ignores Idempotency-Key: each invoice was charged once, the corrupt file never.
    const charges = await reservesBySha(url);
    expect(charges.size).toBe(14);
    expect([...charges.values()].every((n) => n === 1)).toBe(true);
  }, 120_000); // seven CLI runs in a row
});
