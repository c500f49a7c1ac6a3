import { constants, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * Which of these files a process on this machine holds open for writing: a second guard after
 * the settle rule, for a writer that pauses longer than --settle (a scanner between pages).
 * Linux only, from /proc/PID/fd and fdinfo; it sees the processes this user may look into
 * (all of them as root), never a writer on another machine (a network share) or in another
 * container: there the settle rule alone decides. What cannot be read counts as not open.
 */
export type OpenForWriting = (paths: string[]) => Promise<Set<string>>;

export const openForWriting: OpenForWriting = async (paths) => {
  const open = new Set<string>();
  if (process.platform !== 'linux' || paths.length === 0) return open;
  const byRealPath = new Map<string, string>();
  for (const path of paths) {
    const real = _quietly(() => realpathSync(path));
    if (real !== undefined) byRealPath.set(real, path);
  }
  // Synchronous on purpose: some thousand tiny reads of /proc, where a thread-pool round trip costs more than the call.
  const pids = _quietly(() => readdirSync('/proc')) ?? [];
  for (const pid of pids) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const fds = _quietly(() => readdirSync(`/proc/${pid}/fd`)) ?? [];
    for (const fd of fds) {
      const link = _quietly(() => readlinkSync(`/proc/${pid}/fd/${fd}`));
      const path = link === undefined ? undefined : byRealPath.get(link);
      if (path === undefined) continue;
      const info = _quietly(() => readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8')) ?? '';
      const flags = Number.parseInt(/^flags:\s*([0-7]+)/m.exec(info)?.[1] ?? '0', 8);
      // O_ACCMODE (3) is not among Node's constants: anything but read-only may still be writing.
      if ((flags & 0o3) !== constants.O_RDONLY) open.add(path);
    }
  }
  return open;
};

function _quietly<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
