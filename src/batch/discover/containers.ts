/**
 * Archives and mail are folders: each input file that is a container (containerKind: .zip,
 * .tar, .tar.gz/.tgz, .eml) is replaced in the discovered files by its parts, one input file
 * each (part.ts), a container within it (a zip in a mail) expanded in turn, one level deep.
 *
 * A container is expanded whole before any of its parts is handed on: one that breaks a bound
 * (bombs, damage) is one failure of its own (an unreadable input, with the reason) and none of its
 * parts is sent; the rest of the run goes on. A member refused by name (a link, `../`, an
 * absolute name) is a failure of its own, named as a part, and the other members go on.
 */
import { rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { DiscoveryStream, InputFile, UnreadableInput } from '../discover.ts';
import { openInput } from '../facts.ts';
import { stampOf } from '../discover.ts';
import { describeFsError } from '../../errno.ts';
import { inert } from '../../inert.ts';
import {
  BOUNDS,
  type Bounds,
  type ContainerKind,
  type ContainerReader,
  type Member,
  containerKind,
  nameProblem,
  Refused,
  sizeText,
} from '../../inputs/container.ts';
import { type PartOf, PartSpace, partName, partOf, TooLarge } from '../../inputs/part.ts';
import { readTar } from '../../inputs/tar.ts';
import { rangeOf } from '../../inputs/read.ts';
import { readZip } from '../../inputs/zip.ts';

export type Expansion = {
  /** The discovered files with each container replaced by its parts, `window` at a time. */
  stream: DiscoveryStream;
  /** Removes the parts' files: once the run is over. */
  release(): void;
};

/** The discovery stream with containers expanded into their parts, written to a part space of its own. */
export function expandContainers(
  discovery: DiscoveryStream,
  window: number,
  options: { bounds?: Bounds; tmpdir?: string; space?: PartSpace } = {},
): Expansion {
  const space = options.space ?? new PartSpace(options.tmpdir);
  const bounds = options.bounds ?? BOUNDS;
  const { found } = discovery;
  async function* chunks(): AsyncGenerator<InputFile[]> {
    const out: InputFile[] = [];
    for await (const chunk of discovery.chunks) {
      for (const file of chunk) {
        if (containerKind(file.file) === undefined) out.push(file);
        else {
          // found.files stays the files found (discovery's own count, which tells an input that matched nothing).
          for (const p of await expandInput(file, space, bounds, found.unreadable)) out.push(p);
        }
        if (out.length >= window) {
          yield out.splice(0, window);
        }
      }
      while (out.length >= window) yield out.splice(0, window);
    }
    while (out.length > 0) yield out.splice(0, window);
  }
  return { stream: { found, chunks: chunks() }, release: () => space.release() };
}

/** What one input file's expansion has used of its bounds so far (nested containers count in it). */
type Budget = { members: number; bytes: number; most: number };

/** One input file's parts; a container refused whole is one unreadable input, and no parts. */
async function expandInput(
  file: InputFile,
  space: PartSpace,
  bounds: Bounds,
  unreadable: UnreadableInput[],
): Promise<InputFile[]> {
  const failed: UnreadableInput[] = [];
  const written: string[] = [];
  try {
    const budget: Budget = {
      members: 0,
      bytes: 0,
      most: Math.min(bounds.bytes, Math.max(bounds.ratioFloor, file.size * bounds.ratio)),
    };
    const parts = await expand(file, undefined, 1, { space, bounds, budget, failed, written });
    unreadable.push(...failed);
    return parts;
  } catch (err) {
    for (const path of written) rmSync(path, { force: true });
    const why = err instanceof Refused ? err.message : `cannot read it: ${describeFsError(err)}`;
    unreadable.push({ file: file.file, reason: `${file.file}: ${why}; none of its parts was sent` });
    return [];
  }
}

type Context = {
  space: PartSpace;
  bounds: Bounds;
  budget: Budget;
  failed: UnreadableInput[];
  /** Every part file written for this input: removed if the input fails whole. */
  written: string[];
};

/** The parts of one container (the input itself, or a container within it: `outer` is the input's PartOf). */
async function expand(file: InputFile, outer: PartOf | undefined, depth: number, ctx: Context): Promise<InputFile[]> {
  const kind = containerKind(file.file) as ContainerKind;
  const handle = await openInput(file.path, file.within);
  try {
    const info = await handle.stat();
    const of = outer ?? partOf(file, stampOf(info));
    const { reader, source, size } = await opened(kind, handle, info.size, ctx);
    try {
      const parts: InputFile[] = [];
      const names = new Set<string>();
      for await (const member of reader(source, size, ctx.bounds)) {
        if (++ctx.budget.members > ctx.bounds.members)
          throw new Refused(`holds more than ${ctx.bounds.members} members`);
        const name = uniqueName(partName(file.file, member.name), names);
        const problem = member.kind === 'refused' ? member.reason : nameProblem(member.name, ctx.bounds);
        if (problem !== undefined) {
          ctx.failed.push({ file: name, reason: `${inert(name)}: ${problem}` });
          continue;
        }
        if (member.kind !== 'file') continue;
        const part = await writePart(member, name, of, ctx);
        if (depth < ctx.bounds.depth && containerKind(name) !== undefined) {
          parts.push(...(await expand(part, of, depth + 1, ctx)));
          rmSync(part.path, { force: true });
        } else parts.push(part);
      }
      return parts;
    } finally {
      if (source !== handle) await source.close();
    }
  } finally {
    await handle.close();
  }
}

/** The reader of a container, and what it reads: a .tar.gz gunzipped into the part space first. */
async function opened(
  kind: ContainerKind,
  handle: FileHandle,
  size: number,
  ctx: Context,
): Promise<{ reader: ContainerReader; source: FileHandle; size: number }> {
  if (kind === 'zip') return { reader: readZip, source: handle, size };
  if (kind === 'eml') return { reader: (await import('../../inputs/mail.ts')).readMail, source: handle, size };
  if (kind === 'tar') return { reader: readTar, source: handle, size };
  const gunzipped = await within(ctx, () =>
    ctx.space.write(
      'archive.tar',
      pipeline(rangeOf(handle, 0, size), createGunzip(), () => {}),
      room(ctx),
    ),
  );
  ctx.written.push(gunzipped.path);
  return { reader: readTar, source: await openInput(gunzipped.path), size: gunzipped.size };
}

/** A member written to the part space, as an input file of its own. */
async function writePart(
  member: Extract<Member, { kind: 'file' }>,
  name: string,
  of: PartOf,
  ctx: Context,
): Promise<InputFile> {
  const max = Math.min(room(ctx), member.declared ?? Number.POSITIVE_INFINITY);
  const written = await within(
    ctx,
    async () => ctx.space.write(member.name, await member.open(), max),
    member.declared,
  );
  ctx.written.push(written.path);
  ctx.budget.bytes += written.size;
  return {
    file: name,
    path: written.path,
    realPath: `${of.realPath}${name.slice(of.file.length)}`,
    size: written.size,
    explicit: false,
    part: of,
  };
}

/** Bytes the input may still expand to. */
function room(ctx: Context): number {
  return ctx.budget.most - ctx.budget.bytes;
}

/** A write that grows past its room is the container's failure: a bomb, or a member whose size lies. */
async function within<T>(ctx: Context, write: () => Promise<T>, declared?: number): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof TooLarge) {
      if (declared !== undefined && err.size > declared)
        throw new Refused(`a member expands past the ${sizeText(declared)} the archive says it holds (a zip bomb?)`);
      throw new Refused(`expands to more than ${sizeText(ctx.budget.most)} (a bomb?)`);
    }
    if (err instanceof Refused) throw err;
    throw new Refused(`a damaged archive (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Two members of one name (a zip may hold both; a mail two `invoice.pdf`): the second is `name (2)`. */
function uniqueName(name: string, taken: Set<string>): string {
  let unique = name;
  for (let n = 2; taken.has(unique); n++) unique = `${name} (${n})`;
  taken.add(unique);
  return unique;
}
