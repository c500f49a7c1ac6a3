/**
 * The file events of the watched folders, from chokidar (inotify on Linux, FSEvents on macOS,
 * ReadDirectoryChangesW on Windows). Events are hints: each one only makes the watcher look
 * at a file, and the periodic rescan finds what events miss (network shares, an inotify limit
 * reached, a write through another mount).
 */
export type FolderEvents = { close(): Promise<void> };

export type EventHandlers = {
  /** A file was added or changed. */
  touched(path: string): void;
  /** A file went away. */
  gone(path: string): void;
  /** The events are not to be trusted any more (e.g. ENOSPC: inotify's watch limit). */
  failed(err: unknown): void;
};

/**
 * Starts watching `folders`; `skip` leaves out a path (hidden names, the outputs, the journal, a
 * file that is no document by its size) before it is watched, given its stat when the watcher has it.
 */
export type WatchFolders = (folders: string[], skip: SkipPath, on: EventHandlers) => Promise<FolderEvents>;

export type SkipPath = (path: string, stats?: { isFile(): boolean; size: number }) => boolean;

export const chokidarEvents: WatchFolders = async (folders, skip, on) => {
  const { watch } = await import('chokidar');
  const watcher = watch(folders, {
    // The initial listing is the watcher's first rescan; the settle rule is ours (on the injected clock).
    ignoreInitial: true,
    awaitWriteFinish: false,
    // A link to a folder is not watched through: the walk's rule on links decides what is sent.
    followSymlinks: false,
    // chokidar watches each file it does not ignore (an inotify watch and its state apiece): a file
    // left out here costs nothing. A file left out for its size is seen again when it is written
    // to (its folder's event), or by the rescan.
    ignored: (path, stats) => skip(path, stats),
  });
  watcher.on('add', on.touched);
  watcher.on('change', on.touched);
  watcher.on('unlink', on.gone);
  watcher.on('error', on.failed);
  await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  return { close: () => watcher.close() };
};
