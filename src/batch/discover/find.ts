import { relative, resolve, sep } from 'node:path';
import type { Log } from '../../client/deps.ts';
import type { DiscoveryStream, InputFile, LinkNotFollowed } from '../discover.ts';
import { streamInputs } from './stream.ts';
import { expandContainers } from './containers.ts';
import { PartSpace } from '../../inputs/part.ts';
import { headerLines } from '../../inputs/header-file.ts';
import { RemoteReader } from '../../inputs/remote.ts';
import { cutOptionsOf, cutPdfInputs, cutsPdfs } from './cuts.ts';
import type { BatchDeps, DiscoverOptions } from '../options.ts';

/**
 * The discover step's answer: the first window of input files, found before anything else is
 * opened (a path that names nothing costs nothing, not even a journal folder), the windows after
 * it, and what discovery found besides the files (complete once the windows have ended).
 */
export type FoundInputs = {
  first: IteratorResult<InputFile[]>;
  rest: AsyncIterator<InputFile[]>;
  found: DiscoveryStream['found'];
  /** Removes the files of the parts of archives and mail, and of cut PDFs (src/inputs/): once the run is over. */
  release(): void;
};

/** Finds the input files, `window` at a time, and waits for the first window. */
export async function findInputs(
  inputs: string[],
  options: DiscoverOptions,
  deps: BatchDeps,
  window: number,
): Promise<FoundInputs> {
  // URLs are read into the run's part space; archives and mail are folders: each is replaced by
  // its parts as it is found. Then pages and splits are cut, locked PDFs unlocked, on this
  // machine: each PDF (a part too) replaced by its parts. One part space holds them all.
  const space = new PartSpace();
  const release = (): void => space.release();
  const headers = headerLines(options.header ?? [], deps.cwd, (note) => deps.stderr.write(`${note}\n`));
  const remote = new RemoteReader({ space, headers });
  const cut = cutOptionsOf(options, deps.cwd);
  const expansion = expandContainers(streamDiscovery(inputs, options, deps, window, remote), window, { space });
  const discovery = cutsPdfs(cut) ? cutPdfInputs(expansion.stream, cut, space) : expansion.stream;
  const rest = discovery.chunks[Symbol.asyncIterator]();
  try {
    const first = await rest.next();
    return { first, rest, found: discovery.found, release };
  } catch (err) {
    release();
    throw err;
  }
}

/** The input files, a window at a time (the chunks end with discovery's usage error, if any). */
function streamDiscovery(
  inputs: string[],
  options: DiscoverOptions,
  deps: BatchDeps,
  window: number,
  remote: RemoteReader,
): DiscoveryStream {
  const discovery = streamInputs(inputs, {
    remote: (url) => remote.read(url),
    remoteParallel: options.concurrency,
    cwd: deps.cwd,
    ignore: [...options.ignore, ...folderExclusions({ done: options.moveDone, failed: options.moveFailed }, deps.cwd)],
    stdin: deps.stdin,
    followLinks: options.followLinks,
    hidden: options.hidden,
    foundIn: options.asFound,
    chunk: window,
  });
  // extract watch names the files it found in its folders: a non-document among them is skipped, as in a walk.
  if (options.asFound === undefined) return discovery;
  return {
    found: discovery.found,
    chunks: {
      async *[Symbol.asyncIterator]() {
        for await (const chunk of discovery.chunks) {
          for (const f of chunk) f.explicit = false;
          yield chunk;
        }
      },
    },
  };
}

/** What discovery found besides the files, said once it is over. */
export function logFound(found: DiscoveryStream['found'], log: Log): void {
  const files = found.files;
  for (const p of found.unmatched) log('warn', `${p}: matched no file`);
  logLinksNotFollowed(found.linksNotFollowed, log);
  logHidden(found.hidden, log);
  if (found.nothingIn !== undefined) log('info', `nothing to do: ${found.nothingIn}`);
  else log('info', `found ${files} file${files === 1 ? '' : 's'}`);
}

/** One line for the links a walk left out (each is in --report), naming the folders they leave. */
function logLinksNotFollowed(links: LinkNotFollowed[], log: Log): void {
  if (links.length === 0) return;
  const folders = [...new Set(links.map((l) => l.folder))].join(', ');
  log(
    'info',
    `left out ${links.length} symbolic link${links.length === 1 ? '' : 's'} that lead${links.length === 1 ? 's' : ''} outside ${folders} (see --report): --follow-links follows them`,
  );
}

function logHidden(hidden: string[], log: Log): void {
  if (hidden.length === 0) return;
  const more = hidden.length > 5 ? ` and ${hidden.length - 5} more (see --report)` : '';
  log(
    'info',
    `skipped ${hidden.length} hidden file${hidden.length === 1 ? '' : 's'} or folder${hidden.length === 1 ? '' : 's'}: ${hidden.slice(0, 5).join(', ')}${more}; --hidden includes them`,
  );
}

/**
 * The move folders as exclusions of the walk: a folder inside the drop folder (`drop/ --move-done
 * drop/done`) is not walked, or each night would list its files again and move them one level deeper.
 */
export function folderExclusions(
  folders: { done?: string | undefined; failed?: string | undefined },
  cwd: string,
): string[] {
  return [folders.done, folders.failed]
    .filter((f): f is string => f !== undefined)
    .map((f) => `${relative(cwd, resolve(cwd, f)).split(sep).join('/')}/**`);
}
