import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { describe, expect, onTestFinished } from 'vitest';
import { cleanEnv, stateHomeIn, tempDir } from '../helpers/cli.ts';
import { invoicePdf } from '../helpers/pdf.ts';
import { mountTmpfs, tmpfsRefused, unmount } from '../helpers/tmpfs.ts';
import { extract, it, KEY, readJsonLines, reservesBySha } from './batch-helpers.ts';

/**
 * The run's part space (TMPDIR) on a real 1 MB tmpfs that an archive's parts do not fit in,
 * against a service that ignores Idempotency-Key (every POST extract is a reserve): the archive
 * that does not fit fails whole with what to free, none of its parts sent; the others are paid
 * once; a rerun with room sends it, and pays nothing again for the rest.
 */

const noTmpfs = tmpfsRefused();

describe('a full disk under the part space', () => {
  it.skipIf(noTmpfs !== undefined)(
    `an archive whose parts do not fit fails whole, naming what to free; the rerun with room sends it; each document paid once${noTmpfs === undefined ? '' : ` [skipped: ${noTmpfs}]`}`,
    async ({ serve }) => {
      const { url } = await serve({ idempotency_key: false });
      const cwd = tempDir('extract-part-disk-');
      const disk = join(cwd, 'tmp');
      mkdirSync(disk);
      expect(mountTmpfs(disk, '1m')).toBeUndefined();
      onTestFinished(() => {
        unmount(disk, true);
      });
      mkdirSync(join(cwd, 'in'));
      writeFileSync(
        join(cwd, 'in', 'a-small.zip'),
        zipSync({ 'a1.pdf': await invoicePdf(8201), 'a2.pdf': await invoicePdf(8202) }),
      );
      // Two invoices, then a scan of 2 MB that cannot be compressed: past the disk once the invoices are written.
      writeFileSync(
        join(cwd, 'in', 'b-big.zip'),
        zipSync({
          'b1.pdf': await invoicePdf(8203),
          'b2.pdf': await invoicePdf(8204),
          'scan.bin': randomBytes(2 << 20),
        }),
      );
      const env = cleanEnv({
        EXTRACT_API_KEY: KEY,
        EXTRACT_BASE_URL: url,
        EXTRACT_CONFIG_DIR: join(cwd, '.config'),
        XDG_STATE_HOME: stateHomeIn(cwd),
        TMPDIR: disk,
      });
      const args = ['in/', '--route', 'inline', '-o', '-', '--format', 'jsonl'];

      const night = await extract(cwd, url, args, { env });
      expect(night.exitCode, night.stderr).toBe(1);
      expect(night.stderr).toContain(
        `in/b-big.zip: no room left to write its parts in ${disk} (the run's part space): free space on that disk, or set TMPDIR to a folder on a larger one, and run again; none of its parts was sent`,
      );
      expect(night.stderr).not.toMatch(/damaged/);
      const first = readJsonLines(String(night.stdout));
      expect(
        first
          .filter((r) => r.status === 'completed')
          .map((r) => r.file)
          .sort(),
      ).toEqual(['in/a-small.zip!a1.pdf', 'in/a-small.zip!a2.pdf']);
      expect((await reservesBySha(url)).size).toBe(2);
      // The space is released: nothing of the run is left on the disk it filled.
      expect(readdirSync(disk).filter((n) => n.startsWith('extract-'))).toEqual([]);

      // Room made: the archive that did not fit is sent; the one paid for is not paid again.
      execFileSync('mount', ['-o', 'remount,size=16m', disk]);
      const rerun = await extract(cwd, url, args, { env });
      expect(rerun.exitCode, rerun.stderr).toBe(0);
      const second = readJsonLines(String(rerun.stdout));
      expect(second.map((r) => [r.file, r.status]).sort()).toEqual([
        ['in/a-small.zip!a1.pdf', 'completed'],
        ['in/a-small.zip!a2.pdf', 'completed'],
        ['in/b-big.zip!b1.pdf', 'completed'],
        ['in/b-big.zip!b2.pdf', 'completed'],
      ]);
      const reserves = await reservesBySha(url);
      expect(reserves.size).toBe(4);
      expect([...reserves.values()].every((n) => n === 1)).toBe(true);
      expect(readdirSync(disk).filter((n) => n.startsWith('extract-'))).toEqual([]);
    },
  );
});
