/**
 * A tar archive's members, read by node-tar's `Parser` (the well-kept reader of the format: ustar,
 * pax and GNU long names, base-256 sizes, checksums). A .tar.gz is first gunzipped into the part
 * space by the expander, within the bounds. Files are taken, folders passed over, every other
 * kind (links, devices, FIFOs) refused by name. node-tar is loaded when a run meets a tar.
 */
import { on, once } from 'node:events';
import { Readable } from 'node:stream';
import type { Parser, ReadEntry } from 'tar';
import { type ContainerReader, type Member, Refused } from './container.ts';
import { rangeOf } from './read.ts';

const FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);
const FOLDER_TYPES = new Set(['Directory', 'GNUDumpDir']);

export const readTar: ContainerReader = async function* (handle, fileSize, bounds): AsyncGenerator<Member> {
  const { Parser } = await import('tar');
  // strict: a bad checksum, a truncated member or a file that is no tar fails the archive, not a warning.
  const parser = new Parser({ strict: true, maxMetaEntrySize: 1024 * 1024 });
  parser.on('error', () => {}); // read through `entries` below; a late one has no one left to hear it
  const stop = new AbortController();
  const entries = on(parser, 'entry', { close: ['end'], signal: stop.signal });
  void feed(parser, rangeOf(handle, 0, fileSize), stop.signal);
  let count = 0;
  try {
    for await (const [entry] of entries as AsyncIterable<[ReadEntry]>) {
      if (++count > bounds.members) throw new Refused(`holds more than ${bounds.members} members`);
      const member = memberOf(entry);
      if (member !== undefined) yield member;
      // A member the expander did not read (refused, passed over) is read past, or the parser waits on it.
      entry.resume();
    }
  } catch (err) {
    if (err instanceof Refused) throw err;
    // An empty archive (`tar -cf x.tar -T /dev/null`: zeros), or one shorter than a header: no members.
    if (count === 0 && /Unrecognized archive format/.test(String(err))) return;
    throw damaged(err);
  } finally {
    stop.abort();
  }
};

/** The archive's bytes into the parser, waiting while a member is not being read. */
async function feed(parser: Parser, source: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<void> {
  try {
    for await (const chunk of source) {
      if (signal.aborted) return;
      if (!parser.write(Buffer.from(chunk))) await once(parser, 'drain', { signal });
    }
    parser.end();
  } catch (err) {
    if (!signal.aborted) parser.abort(err instanceof Error ? err : new Error(String(err)));
  }
}

function memberOf(entry: ReadEntry): Member | undefined {
  // `tar -C dir .` writes every name from `./`: the folder itself, not part of a member's name.
  const name = entry.path.replace(/^(\.\/)+/, '');
  if (FOLDER_TYPES.has(entry.type) || name === '' || name.endsWith('/')) return undefined;
  if (FILE_TYPES.has(entry.type))
    return {
      kind: 'file',
      name,
      declared: entry.size,
      open: () => (entry.size === 0 ? new Uint8Array(0) : Readable.from(whole(entry))),
    };
  return { kind: 'refused', name, reason: `${tarKind(entry.type)} in the archive: not followed, not expanded` };
}

/** A member's bytes, failing the archive if they end before its size (a truncated archive): no partial part. */
async function* whole(entry: ReadEntry): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of entry) {
    read += chunk.length;
    yield chunk;
  }
  if (read < entry.size) throw new Refused('a damaged tar archive (a member lies past its end)');
}

function tarKind(type: string): string {
  if (type === 'SymbolicLink') return 'a symbolic link';
  if (type === 'Link') return 'a hard link';
  if (type === 'CharacterDevice' || type === 'BlockDevice') return 'a device';
  if (type === 'FIFO') return 'a FIFO';
  return `a member of type ${JSON.stringify(type)}`;
}

/** node-tar's error, as the reason the archive is not expanded. */
function damaged(err: unknown): Refused {
  const message = err instanceof Error ? err.message : String(err);
  if (/checksum failure/.test(message))
    return new Refused('not a tar archive, or a damaged one (a header fails its checksum)');
  if ((err as { tarCode?: string }).tarCode === 'TAR_ENTRY_INVALID')
    return new Refused(`not a tar archive, or a damaged one (a bad header: ${message})`);
  if (/Truncated input/.test(message)) return new Refused('a damaged tar archive (a member lies past its end)');
  return new Refused(`a damaged tar archive (${message.replace(/^TAR_[A-Z_]+: /, '')})`);
}
