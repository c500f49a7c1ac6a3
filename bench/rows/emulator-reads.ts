import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractInline, getText } from '../lib/api.ts';
import { EMULATOR_KEY, stop } from '../lib/emulator.ts';
import { NODE, ROOT } from '../lib/paths.ts';
import { writeInvoices } from '../lib/pdfs.ts';
import { check, run } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';

type WrkResult = { rps: number; p99ms: number; requests: number };

/** CPU seconds (user + system) of a process's main thread so far: what bounds a Node server's throughput. */
function mainThreadCpu(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** wrk against `url`, and the main-thread CPU the server `pid` spent per request meanwhile (microseconds). */
async function measured(url: string, pid: number, connections: number, seconds: number, answers?: number) {
  const before = mainThreadCpu(pid);
  const w = await wrk(url, connections, seconds, answers);
  return { ...w, cpuUs: ((mainThreadCpu(pid) - before) * 1e6) / w.requests };
}

/** Row 6: wrk on GET documents/{id} of `extract serve`, against a bare node:http server answering the same bytes. */
export async function emulatorReadRows(ctx: BenchContext): Promise<Row[]> {
  const connections = ctx.tiny ? 4 : 64;
  const seconds = ctx.tiny ? 1 : 10;
  // --tiny: wrk stops after this many answers (peers/wrk-stop.lua), well before its 1 s.
  const answers = ctx.tiny ? 1000 : undefined;
  const [pdf] = await writeInvoices(join(ctx.tmp, 'reads'), 1);
  if (!pdf) throw new Error('no PDF');
  const emulator = await ctx.emulator();
  const ours: Array<WrkResult & { cpuUs: number }> = [];
  const peer: Array<WrkResult & { cpuUs: number }> = [];
  try {
    const id = await extractInline(emulator.url, EMULATOR_KEY, pdf);
    const docUrl = `${emulator.url}/api/v1/documents/${id}`;
    const doc = await getText(docUrl, EMULATOR_KEY);
    if (doc.status !== 200) throw new Error(`row 6: GET the document: HTTP ${doc.status}`);
    const bodyFile = join(ctx.tmp, 'document.json');
    writeFileSync(bodyFile, doc.text);
    const bare = spawn(NODE, [join(ROOT, 'bench/peers/bare-server.ts'), bodyFile], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const bareUrl = await new Promise<string>((resolve, reject) => {
        bare.stdout.setEncoding('utf8').once('data', (c: string) => {
          const m = /Listening on (\S+)/.exec(c);
          if (m?.[1]) resolve(m[1]);
          else reject(new Error(`bare server: ${c}`));
        });
        bare.once('exit', (code) => reject(new Error(`bare server exited ${code}`)));
      });
      for (let r = 0; r < ctx.reps; r++) {
        ctx.log(`row 6: wrk rep ${r + 1}/${ctx.reps}`);
        ours.push(await measured(docUrl, emulator.pid, connections, seconds, answers));
        peer.push(await measured(`${bareUrl}/api/v1/documents/${id}`, bare.pid ?? 0, connections, seconds, answers));
      }
    } finally {
      await stop(bare);
    }
  } finally {
    await emulator.close();
  }
  return [
    row(ctx, {
      id: '6',
      measurement: `Emulator reads: GET documents/{id}, wrk ${connections} connections, ${answers === undefined ? `${seconds} s` : `the first ${answers.toLocaleString('en-US')} answers`}`,
      figure: median(ours.map((w) => w.rps)),
      unit: 'req/s',
      peer: 'bare node:http server, same bytes',
      peerFigure: median(peer.map((w) => w.rps)),
      goal: '>= 0.9x',
      pass: (x) => x >= 0.9,
      note: `p99 latency ${median(ours.map((w) => w.p99ms)).toFixed(1)} ms (bare server: ${median(peer.map((w) => w.p99ms)).toFixed(1)} ms); wrk on 1 thread shares the 2 cores with the server. Main-thread CPU a request (user+sys, /proc, what bounds either server and moves least with the machine's load): ${median(ours.map((w) => w.cpuUs)).toFixed(1)} us, bare ${median(peer.map((w) => w.cpuUs)).toFixed(1)} us. A kept body's plain read is answered before Fastify (src/emulator/routes/fast-reads.ts): through Fastify (routing, request and reply objects, the guard, fault and send hooks) a read cost 0.848x the bare server's rate on a quiet machine`,
    }),
  ];
}

/** wrk on one thread; with `answers`, it stops after that many (peers/wrk-stop.lua) or at `seconds`, whichever is first. */
async function wrk(url: string, connections: number, seconds: number, answers?: number): Promise<WrkResult> {
  const stopAfter = answers === undefined ? [] : ['-s', join(ROOT, 'bench/peers/wrk-stop.lua')];
  const r = await run('wrk', [
    '-t1',
    `-c${connections}`,
    `-d${seconds}s`,
    '--latency',
    ...stopAfter,
    '-H',
    `Authorization: Bearer ${EMULATOR_KEY}`,
    url,
    ...(answers === undefined ? [] : ['--', String(answers)]),
  ]);
  check(r, 'wrk');
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(r.stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout);
  if (non2xx) throw new Error(`wrk: ${non2xx[1]} answers were not 2xx`);
  const unit = p99?.[2] === 'us' ? 0.001 : p99?.[2] === 's' ? 1000 : 1;
  const requests = Number(/(\d+) requests in/.exec(r.stdout)?.[1]);
  return { rps, p99ms: Number(p99?.[1]) * unit, requests };
}
