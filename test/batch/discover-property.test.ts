import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { DiscoverOptions } from '../../src/batch/discover.ts';
import { discoverInputs, streamInputs } from '../../src/batch/discover/stream.ts';
import { referenceDiscoverInputs } from './discover-reference.ts';

/**
 * Discovery streams. The streaming walk (sorted names, a subfolder walked at
 * its name + "/", duplicates told apart without holding every path) must find what the walk it
 * replaced found (discover-reference.ts: every file collected, then sorted by path), in the same
 * order, over random trees whose names sort around "/", with links inside and out, and several
 * overlapping inputs.
 */

// Characters that sort below "/" (" ", "-", "."), just above it (digits), upper case, and
// beyond ASCII (é, 日, and 𝒳, two UTF-16 units), so that a folder's files fall between its siblings.
const CHARS = ['a', 'b', '-', '.', ' ', '0', '9', 'A', 'é', '日', '~', '𝒳'];
const nameArb = fc
  .array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: 3 })
  .map((cs) => cs.join(''))
  .filter((n) => n !== '.' && n !== '..');

type Node =
  | { name: string; kind: 'file' }
  | { name: string; kind: 'link'; target: number }
  | { name: string; kind: 'folder'; children: Node[] };

const treeArb = fc.letrec<{ folder: Node[]; node: Node }>((tie) => ({
  folder: fc.uniqueArray(tie('node'), { maxLength: 5, selector: (n) => n.name }),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ name: nameArb, kind: fc.constant('file' as const) }),
    fc.record({ name: nameArb, kind: fc.constant('link' as const), target: fc.nat() }),
    fc.record({ name: nameArb, kind: fc.constant('folder' as const), children: tie('folder') }),
  ),
})).folder;

const caseArb = fc.record({
  tree: treeArb,
  // Each input: an index into the inputs this tree offers (see inputsOf).
  inputs: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
  exclude: fc.constantFrom(undefined, '!**/a*', '!**/*9*'),
  ignore: fc.constantFrom<string[]>([], ['**/b*'], ['**/ *']),
  followLinks: fc.boolean(),
  chunk: fc.integer({ min: 1, max: 4 }),
});

const base = mkdtempSync(join(tmpdir(), 'discover-prop-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let runs = 0;

/** Writes the tree under cwd/root; returns its paths (relative to cwd) by kind. */
function build(cwd: string, tree: Node[]): { files: string[]; folders: string[]; links: string[] } {
  const outside = join(cwd, 'outside');
  mkdirSync(join(outside, 'dir'), { recursive: true });
  writeFileSync(join(outside, 'far.pdf'), 'far');
  writeFileSync(join(outside, 'dir/x.pdf'), 'x');
  const made = { files: [] as string[], folders: ['root'], links: [] as string[] };
  const links: Array<{ path: string; target: number }> = [];
  const write = (folder: string, nodes: Node[]): void => {
    mkdirSync(join(cwd, folder), { recursive: true });
    for (const node of nodes) {
      const path = `${folder}/${node.name}`;
      if (node.kind === 'file') {
        writeFileSync(join(cwd, path), path);
        made.files.push(path);
      } else if (node.kind === 'folder') {
        made.folders.push(path);
        write(path, node.children);
      } else {
        links.push({ path, target: node.target });
        made.links.push(path);
      }
    }
  };
  write('root', tree);
  // A link leads to a file or folder of the tree (its own folder too: a loop), another link,
  // out of the tree, or nowhere.
  const targets = [...made.files, ...made.folders, ...made.links, 'outside/far.pdf', 'outside/dir', 'outside/gone.pdf'];
  for (const { path, target } of links)
    symlinkSync(join(cwd, targets[target % targets.length] as string), join(cwd, path));
  return made;
}

/**
 * The inputs a tree offers: its folders, files and links as named, spelled two ways, and a
 * pattern. The pattern only beside one link at most: fast-glob follows links to folders with
 * no memory of where it has been, so two links to a folder above them make 2^40 paths (ELOOP
 * ends each at 40 levels), in the old discovery and the new alike.
 */
function inputsOf(cwd: string, made: ReturnType<typeof build>): string[] {
  return [
    'root',
    './root/',
    join(cwd, 'root'),
    ...(made.links.length <= 1 ? ['root/**/*'] : []),
    ...made.folders.slice(1),
    ...made.files,
    ...made.files.map((f) => `./${f}`),
    ...made.links,
  ];
}

async function streamed(inputs: string[], options: DiscoverOptions & { chunk: number }) {
  const { chunks, found } = streamInputs(inputs, options);
  const files = [];
  for await (const chunk of chunks) {
    expect(chunk.length).toBeGreaterThan(0);
    expect(chunk.length).toBeLessThanOrEqual(options.chunk);
    files.push(...chunk);
    expect(found.files).toBe(files.length);
  }
  return { ...found, files };
}

/**
 * What a discovery found, to compare. The unreadable are compared as a set: the old walk listed
 * them in the file system's listing order, the streaming walk in the batch's.
 */
function comparable(found: unknown) {
  if (found instanceof Error) return { error: found.message };
  // Both walks leave hidden names out; the old one did not name them.
  const { hidden: _hidden, ...d } = found as Awaited<ReturnType<typeof discoverInputs>>;
  return {
    ...d,
    // The folder a file must be in when read (facts.ts): the old walk had no such rule.
    files: d.files.map(({ within: _within, ...file }) => file),
    unreadable: [...d.unreadable].sort((a, b) =>
      a.file < b.file ? -1 : a.file > b.file ? 1 : a.reason < b.reason ? -1 : 1,
    ),
  };
}

describe('streaming discovery finds what the old walk found', () => {
  it('over random trees, inputs, exclusions and links: the same files, order, links and errors', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ tree, inputs: picks, exclude, ignore, followLinks, chunk }) => {
        const cwd = join(base, String(runs++));
        try {
          const made = build(cwd, tree);
          const offered = inputsOf(cwd, made);
          const inputs = [...picks.map((p) => offered[p % offered.length] as string), ...(exclude ? [exclude] : [])];
          const options = { cwd, ignore, followLinks };
          const expected = comparable(await referenceDiscoverInputs(inputs, options).catch((e: unknown) => e));
          const now = comparable(await discoverInputs(inputs, options).catch((e: unknown) => e));
          expect(now, JSON.stringify(inputs)).toEqual(expected);
          const chunked = comparable(await streamed(inputs, { ...options, chunk }).catch((e: unknown) => e));
          expect(chunked, JSON.stringify(inputs)).toEqual(expected);
        } finally {
          rmSync(cwd, { recursive: true, force: true });
        }
      }),
      {
        numRuns: Number(process.env.PROP_RUNS ?? 300),
        seed: process.env.PROP_SEED ? Number(process.env.PROP_SEED) : undefined,
      },
    );
  });
});
