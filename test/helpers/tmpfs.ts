import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mounts a tmpfs of `size` on `dir`; the reason it cannot here (not root, no CAP_SYS_ADMIN), or undefined. */
export function mountTmpfs(dir: string, size: string): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `mount -t tmpfs is not permitted here (${String(err).split('\n')[0]})`;
  }
}

/** Unmounts at once, or lazily (`-l`) where a child may still hold a file open in it. */
export function unmount(dir: string, lazy = false): void {
  execFileSync('umount', lazy ? ['-l', dir] : [dir], { stdio: 'pipe' });
}

/**
 * Why this machine cannot mount a tmpfs for a test (CI containers run as root and can), or
 * undefined. Read as a file is collected, outside any test: the probe's folder goes at once.
 */
export function tmpfsRefused(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'extract-probe-'));
  const why = mountTmpfs(probe, '64k');
  if (why === undefined) unmount(probe);
  rmSync(probe, { recursive: true, force: true });
  return why;
}
