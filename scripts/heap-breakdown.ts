/**
 * A heap snapshot's self sizes grouped by what they are (constructor, or for strings what they
 * look like: a path, a sha256, JSON text), divided by a batch size: bytes per document.
 *
 *   node scripts/heap-breakdown.ts <file.heapsnapshot> <documents> [top]
 */
import { readFileSync } from 'node:fs';

const [file, docsArg, topArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: heap-breakdown.ts <file.heapsnapshot> <documents> [top]');
const docs = Number(docsArg ?? 1);
const top = Number(topArg ?? 30);
const snap = JSON.parse(readFileSync(file, 'utf8')) as {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
};
const fields = snap.snapshot.meta.node_fields;
const width = fields.length;
const at = (f: string) => fields.indexOf(f);
const [TYPE, NAME, SIZE] = [at('type'), at('name'), at('self_size')];
const types = snap.snapshot.meta.node_types[0];
const groups = new Map<string, { n: number; bytes: number }>();
let total = 0;
const stringKind = (s: string): string => {
  if (/^[0-9a-f]{64}$/.test(s)) return 'string: sha256';
  if (s.startsWith('/')) return 'string: path';
  if (s.startsWith('{') || s.startsWith('[')) return 'string: JSON text';
  if (s.startsWith('sha256:') || s.includes(':')) return 'string: key-like (with ":")';
  return 'string: other';
};
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + TYPE] as number] ?? '?';
  const name = snap.strings[snap.nodes[i + NAME] as number] ?? '';
  const size = snap.nodes[i + SIZE] as number;
  total += size;
  const key =
    type === 'string' || type === 'concatenated string' || type === 'sliced string'
      ? stringKind(name)
      : `${type}: ${name.slice(0, 60)}`;
  const g = groups.get(key) ?? { n: 0, bytes: 0 };
  g.n++;
  g.bytes += size;
  groups.set(key, g);
}
console.log(`total ${(total / 1e6).toFixed(1)} MB, ${(total / docs).toFixed(0)} B/doc over ${docs} documents`);
for (const [key, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
  console.log(
    `${(g.bytes / 1e6).toFixed(2).padStart(8)} MB ${(g.bytes / docs).toFixed(0).padStart(6)} B/doc ${String(g.n).padStart(8)}  ${key}`,
  );
