/**
 * Where a first run's memory goes: the CLI over N one-page PDFs against the
 * stand-in (as bench row 10 mem), its peak RSS, and heap snapshots taken when the stand-in has
 * answered the given fractions of the batch (NODE_OPTIONS=--heapsnapshot-signal).
 *
 *   node scripts/mem-probe.ts <n> [fraction...]   (files cached under $MEM_PROBE_DIR, /tmp/mem-probe)
 */
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { writeCopies } from '../bench/lib/pdfs.ts';
import { CLI as BUILT_CLI, NODE } from '../bench/lib/paths.ts';
import { cleanEnv } from '../bench/lib/cli.ts';
import { STANDIN_KEY, startStandIn } from '../bench/lib/standin.ts';

const n = Number(process.argv[2] ?? 1000);
// Another build of the CLI (a copy of bin/ and dist/), so that the worktree can be rebuilt during a long run.
const CLI = process.env.MEM_PROBE_CLI ?? BUILT_CLI;
const fractions = process.argv.slice(3).map(Number);
const root = process.env.MEM_PROBE_DIR ?? '/tmp/mem-probe';
const dir = join(root, `pdfs-${n}`);
if (!existsSync(dir) || readdirSync(dir).length !== n) await writeCopies(dir, n, 'p-');
const snaps = join(root, `snaps-${n}-${process.pid}`);
mkdirSync(snaps, { recursive: true });
const standIn = await startStandIn();
const args = [CLI, dir, '--base-url', standIn.url, '--api-key', STANDIN_KEY, '--no-progress', '-q', '-c', '8'];
args.push(
  '-o',
  join(root, 'out.jsonl'),
  '--state',
  join(snaps, 'state.sqlite'),
  ...(process.env.MEM_PROBE_ARGS ?? '').split(' ').filter(Boolean),
);
const env = { ...cleanEnv(join(root, 'home')), NODE_OPTIONS: '--heapsnapshot-signal=SIGUSR2' };
const started = Date.now();
const child = spawn('/usr/bin/time', ['-f', '%M %U %S', NODE, ...args], {
  cwd: snaps,
  env,
  stdio: ['ignore', 'inherit', 'pipe'],
});
let stderr = '';
child.stderr.on('data', (d: Buffer) => {
  stderr += d.toString();
});
const pending = [...fractions].sort((a, b) => a - b);
// RSS sampled through the run: where the peak falls (answered 0: the plan; else sending).
const samples: Array<{ s: number; rssMb: number; answered: number }> = [];
const rssOf = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};
let nodePid: number | undefined;
const sampler = setInterval(() => {
  if (nodePid === undefined) {
    const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
    nodePid = kids === '' ? undefined : Number(kids.split(' ')[0]);
    if (nodePid === undefined) return;
  }
  samples.push({ s: (Date.now() - started) / 1000, rssMb: rssOf(nodePid), answered: standIn.counts.inline });
}, 250);
const timer = setInterval(() => {
  const next = pending[0];
  if (next !== undefined && standIn.counts.inline >= next * n) {
    pending.shift();
    // /usr/bin/time's child is the node process.
    spawn('pkill', ['-USR2', '-P', String(child.pid)]);
    console.log(`snapshot at ${standIn.counts.inline}/${n}`);
  }
}, 50);
const code: number = await new Promise((r) => child.on('exit', (c) => r(c ?? 1)));
clearInterval(timer);
clearInterval(sampler);
const top = samples.reduce((m, x) => (x.rssMb > m.rssMb ? x : m), { s: 0, rssMb: 0, answered: 0 });
const planPeak = Math.max(0, ...samples.filter((x) => x.answered === 0).map((x) => x.rssMb));
console.log(JSON.stringify({ sampledPeak: top, planPeakMb: planPeak, samples: samples.length }));
for (let i = 0; i < samples.length; i += Math.max(1, Math.floor(samples.length / 20)))
  console.log(JSON.stringify(samples[i]));
await standIn.close();
const last = stderr.trim().split('\n').at(-1) ?? '';
const [kb, user, sys] = last.split(' ').map(Number);
console.log(
  JSON.stringify({
    n,
    code,
    peakMb: (kb ?? 0) / 1024,
    cpu: (user ?? 0) + (sys ?? 0),
    wallS: (Date.now() - started) / 1000,
    inline: standIn.counts.inline,
    snaps,
  }),
);
if (code !== 0) console.log(stderr.slice(-2000));
