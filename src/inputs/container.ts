/**
 * What every reader of a container (zip, tar, mail) hands the expander: its members, one at a
 * time, each a file to write to the part space or a member refused with the reason; and the
 * bounds a container is held to, whichever kind it is.
 */
import type { FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';

/** A member of a container: its bytes opened when the expander writes it, or why it is not taken. */
export type Member =
  | {
      kind: 'file';
      name: string;
      /** The size the container says it has (zip, tar): more than it is a lie, and the container fails. */
      declared?: number | undefined;
      open: () => Promise<Readable | Uint8Array> | Readable | Uint8Array;
    }
  | { kind: 'refused'; name: string; reason: string };

/** A container's reader: its members, in the container's order. Throws `Refused` for the container as a whole. */
export type ContainerReader = (handle: FileHandle, size: number, bounds: Bounds) => AsyncIterable<Member>;

/**
 * The bounds of one input file's expansion, nested containers included: a container past any of
 * them is one failure of its own (a "bomb"), not a full disk or a run that never ends.
 */
export type Bounds = {
  /** The most members (files, folders, links) counted over the input and what it holds. */
  members: number;
  /** The most bytes its parts may expand to, together. */
  bytes: number;
  /** The most bytes expanded per byte of the input file, past `ratioFloor`. */
  ratio: number;
  /** Expanded bytes any input may reach whatever its ratio (a small zip of text is legitimately 100:1). */
  ratioFloor: number;
  /** Containers within containers: 2 is a zip in a mail, and no deeper. */
  depth: number;
  /** The longest member name, in bytes of UTF-8. */
  nameLength: number;
  /** The largest mail, read whole by the mail parser. */
  mailBytes: number;
};

const MiB = 1024 * 1024;

export const BOUNDS: Bounds = {
  members: 50_000,
  bytes: 4096 * MiB,
  ratio: 100,
  ratioFloor: 64 * MiB,
  depth: 2,
  nameLength: 1024,
  mailBytes: 256 * MiB,
};

/** A container that cannot be expanded at all (damaged, a bomb, past a bound): the input fails with this reason. */
export class Refused extends Error {}

/**
 * Why a member's name is refused, if it is: one that would reach outside the folder it is
 * expanded into were it a path (absolute, `..`), or longer than the bound. The part space never
 * makes a path of a member's name; these are refused so that no tool reading the same archive
 * is led there either, and the user hears of it.
 */
export function nameProblem(name: string, bounds: Bounds): string | undefined {
  if (Buffer.byteLength(name) > bounds.nameLength)
    return `a member name longer than ${bounds.nameLength} bytes: not expanded`;
  if (name.includes('\u0000')) return 'a member name holding a NUL byte: not expanded';
  if (name.startsWith('/') || name.startsWith('\\') || /^[A-Za-z]:/.test(name))
    return 'an absolute member name (it would be written outside the folder it is expanded into): not expanded';
  if (name.split(/[\\/]/).includes('..'))
    return 'a member name with ".." (it would be written outside the folder it is expanded into): not expanded';
  return undefined;
}

/** Which kind of container a name is, by its extension (none: a file as any other). */
export type ContainerKind = 'zip' | 'tar' | 'tar.gz' | 'eml';

export function containerKind(name: string): ContainerKind | undefined {
  const lower = name.toLowerCase();
  if (lower.endsWith('.zip')) return 'zip';
  if (lower.endsWith('.tar')) return 'tar';
  if (lower.endsWith('.tar.gz') || lower.endsWith('.tgz')) return 'tar.gz';
  if (lower.endsWith('.eml')) return 'eml';
  return undefined;
}

/** Bytes as people read them in a reason. */
export function sizeText(bytes: number): string {
  if (bytes >= 1024 * MiB) return `${(bytes / (1024 * MiB)).toFixed(1)} GiB`;
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}
