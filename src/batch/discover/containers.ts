/**
 * Archives and mail are folders: each input file that is a container (containerKind: .zip,
 * .tar, .tar.gz/.tgz, .eml) is replaced in the discovered files by its parts, one input file
 * each (part.ts), a container within it (a zip in a mail) expanded in turn, one level deep.
 *
 * A container is expanded whole before any of its parts is handed on: one that breaks a bound
 * (bombs, damage) is one refusal for the whole container and none of its parts is sent; the rest
 * of the run goes on. A member refused by name (a link, `../`, an absolute name) is a refusal of
 * its own, named as a part, and the other members go on. A container that cannot be read at all
 * (its file gone, a full part space) is an unreadable input, tried again by the next run.
 *
 * Either refusal is handed on as a part of its own (refusal.ts): a document the send step fails
 * unsent, at no cost, and the journal sets aside, as a locked PDF is; so a drop folder holding
 * a bomb fails one night, not every night, and `--move-done` keeps the archive (a part of it is
 * not done). A part space that is full is no refusal: the archive is left for the next run.
 */
import { rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { DiscoveryStream, InputFile, UnreadableInput } from '../discover.ts';
import { fileFacts, openInput, type ReadFacts } from '../facts.ts';
import { stampOf } from '../discover.ts';
import { describeFsError, isDiskFull } from '../../errno.ts';
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
import { refusalBytes } from '../../inputs/refusal.ts';
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

/** One input file's parts; a container refused whole is one refused part (or, that failing, one unreadable input). */
async function expandInput(
  file: InputFile,
  space: PartSpace,
  bounds: Bounds,
  unreadable: UnreadableInput[],
): Promise<InputFile[]> {
  const refused: Refusal[] = [];
  const written: string[] = [];
  const budget: Budget = {
    members: 0,
    bytes: 0,
    most: Math.min(bounds.bytes, Math.max(bounds.ratioFloor, file.size * bounds.ratio)),
  };
  const ctx: Context = { space, bounds, budget, refused, written };
  let parts: InputFile[];
  try {
    parts = await expand(file, undefined, 1, ctx);
  } catch (err) {
    for (const path of written) rmSync(path, { force: true });
    if (!(err instanceof Refused)) {
      const why = isDiskFull(err) ? space.fullText() : `cannot read it: ${describeFsError(err)}`;
      unreadable.push({ file: file.file, reason: `${file.file}: ${why}; none of its parts was sent` });
      return [];
    }
    parts = [];
    refused.length = 0;
    refused.push({ name: file.file, why: `${err.message}; none of its parts was sent` });
  }
  // The archive is hashed once, for all its refusals (none: not at all).
  const archive = refused.length === 0 ? undefined : fileFacts(file.path, file.size, file.within);
  archive?.catch(() => {});
  for (const r of refused) {
    const part = archive && (await refusedPart(file, r, ctx, archive).catch(() => undefined));
    if (part === undefined) unreadable.push({ file: r.name, reason: `${inert(r.name)}: ${r.why}` });
    else parts.push(part);
  }
  return parts;
}

/** A member refused by name, or the container refused whole (`name` is then the container's). */
type Refusal = { name: string; why: string };

/**
 * A refusal as a part of the input file: its bytes say which container (by content) and which of
 * its members, so the journal knows it again the next night (and not once the archive changes);
 * `refused` tells the send step to fail it unsent. Written last: a full part space leaves it an
 * unreadable input, said every run, as before.
 */
async function refusedPart(
  file: InputFile,
  refusal: Refusal,
  ctx: Context,
  archive: Promise<ReadFacts>,
): Promise<InputFile> {
  const { sha256, read } = await archive;
  const of = partOf(file, read);
  const member = refusal.name.slice(file.file.length);
  const written = await ctx.space.write('refused', refusalBytes(sha256, member), Number.POSITIVE_INFINITY);
  return {
    file: refusal.name,
    path: written.path,
    realPath: `${of.realPath}${member}`,
    size: written.size,
    // Sent on whatever its content: the send step fails it before anything leaves the machine.
    explicit: true,
    part: of,
    refused: refusal.why,
  };
}

type Context = {
  space: PartSpace;
  bounds: Bounds;
  budget: Budget;
  /** Members refused by name: each a refused part of its own once the input is expanded. */
  refused: Refusal[];
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
          ctx.refused.push({ name, why: problem });
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
    if (err instanceof Refused || isDiskFull(err)) throw err;
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
