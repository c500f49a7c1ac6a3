import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NODE, ROOT } from '../lib/paths.ts';
import { check, run } from '../lib/proc.ts';
import { row, type BenchContext, type Row } from '../lib/row.ts';
import { median } from '../lib/stats.ts';

/**
 * Row 13: what an install costs. The client alone (extract-cli's tarball) against the client with
 * the engine (extract-cli-engine: what every install held before the engine was a package of its
 * own), both from `npm pack` tarballs installed from the registry into fresh project folders; and
 * the start-up of each install's `extract --version` and `--help`, interleaved.
 */
export async function installRows(ctx: BenchContext): Promise<Row[]> {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const packed = join(ctx.tmp, 'packed');
  mkdirSync(packed);
  ctx.log('row 13: npm pack of the client and the engine, then two installs from the registry');
  check(
    await run(
      'npm',
      ['pack', '--workspaces', '--include-workspace-root', '--ignore-scripts', '--pack-destination', packed],
      {
        cwd: ROOT,
      },
    ),
    'npm pack',
  );
  const install = async (name: string, tarballs: string[]): Promise<string> => {
    const project = join(ctx.tmp, name);
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), '{ "name": "a-project", "private": true }\n');
    const paths = tarballs.map((t) => join(packed, `${t}-${version}.tgz`));
    check(
      await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', ...paths], { cwd: project }),
      `npm install ${name}`,
    );
    return project;
  };
  const client = await install('client', ['extract-cli']);
  const full = await install('full', ['extract-cli', 'extract-cli-engine']);
  const mb = (project: string) =>
    Number(execFileSync('du', ['-sk', join(project, 'node_modules')], { encoding: 'utf8' }).split('\t')[0]) / 1024;
  const [clientMb, fullMb] = [mb(client), mb(full)];

  const runs = ctx.tiny ? 1 : 20;
  const bin = (project: string) => join(project, 'node_modules', 'extract-cli', 'bin', 'extract.js');
  const times = {
    clientVersion: [] as number[],
    fullVersion: [] as number[],
    clientHelp: [] as number[],
    fullHelp: [] as number[],
  };
  ctx.log(`row 13: ${runs} start-ups of each install`);
  for (let i = 0; i < runs; i++) {
    for (const [key, project, flag] of [
      ['clientVersion', client, '--version'],
      ['fullVersion', full, '--version'],
      ['clientHelp', client, '--help'],
      ['fullHelp', full, '--help'],
    ] as const) {
      const t = performance.now();
      const r = await run(NODE, [bin(project), flag]);
      times[key].push(performance.now() - t);
      if (r.code !== 0) throw new Error(`row 13: ${key} exited ${r.code}: ${r.stderr}`);
    }
  }
  return [
    row(ctx, {
      id: '14 size',
      measurement: 'Install: node_modules of the client alone (npm install of the extract-cli tarball, --omit=dev)',
      figure: clientMb,
      unit: 'MB',
      peer: 'the limit (40 MB)',
      peerFigure: 40,
      goal: '< 1x',
      pass: (x) => x < 1,
    }),
    row(ctx, {
      id: '14 full',
      measurement: 'Install: node_modules of the client alone',
      figure: clientMb,
      unit: 'MB',
      peer: 'the client and the engine (extract-cli-engine), what every install held before',
      peerFigure: fullMb,
      goal: 'reported',
    }),
    ...(['version', 'help'] as const).map((flag) =>
      row(ctx, {
        id: `14 ${flag}`,
        measurement: `Start-up of the client-only install: extract --${flag} (median of ${runs})`,
        figure: median(flag === 'version' ? times.clientVersion : times.clientHelp),
        unit: 'ms',
        peer: `the same from the install with the engine`,
        peerFigure: median(flag === 'version' ? times.fullVersion : times.fullHelp),
        goal: '<= 1.1x (no slower)',
        pass: (x) => x <= 1.1,
      }),
    ),
  ];
}
