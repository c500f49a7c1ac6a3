import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { REFERENCE_PATH } from '../../scripts/cli-reference.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { ExtractError } from '../../src/errors.ts';
import type { RunValues, WatchValues } from '../../src/flags/batch.ts';
import { GET_FLAGS, RUN_FLAGS, WATCH_FLAGS } from '../../src/flags/batch.ts';
import { addFlags } from '../../src/flags/commander.ts';
import { parseFlags } from '../../src/flags/parse.ts';
import { LISTEN_FLAGS, type ServeValues, SERVE_FLAGS } from '../../src/flags/servers.ts';
import { attributeOf, type FlagTable, flagsOf } from '../../src/flags/spec.ts';
import { FLAG_TABLES } from '../../src/flags/tables.ts';

/**
 * Each flag declared once: the commander program holds exactly the flags of
 * the tables in src/flags/, the reference page shows each table's defaults, and the parsed
 * values have the types and defaults the tables declare.
 */

/** What commander adds to every command by itself (-h) or through cli/commands.ts (-V). */
const OWN_OF_EVERY_COMMAND = new Set(['-V, --version']);

function commands(program: Command): [string, Command][] {
  const out: [string, Command][] = [];
  const visit = (cmd: Command, parents: string[]): void => {
    const path = [...parents, cmd.name()].join(' ');
    out.push([path, cmd]);
    for (const sub of cmd.commands) visit(sub, [...parents, cmd.name()]);
  };
  visit(program, []);
  return out;
}

/** Every difference between the program's options and the tables, as lines people can read. */
function mismatches(program: Command, tables: Readonly<Record<string, FlagTable>>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [path, cmd] of commands(program)) {
    seen.add(path);
    const options = cmd.options.map((o) => o.flags).filter((f) => !OWN_OF_EVERY_COMMAND.has(f));
    const table = tables[path] ?? {};
    const declared = Object.entries(table).map(([key, spec]) => flagsOf(key, spec));
    for (const f of options) if (!declared.includes(f)) out.push(`${path}: ${f} is an option, not in its table`);
    for (const f of declared) if (!options.includes(f)) out.push(`${path}: ${f} is in its table, not an option`);
    if (out.length === 0 && options.join('|') !== declared.join('|'))
      out.push(`${path}: the options are not in the table's order`);
  }
  for (const path of Object.keys(tables)) if (!seen.has(path)) out.push(`${path}: a table of no command`);
  return out;
}

/** The "Default: `x`" of each flag of a command's section of docs/reference.md, by its flags text. */
function pageDefaults(path: string): Map<string, string> {
  const page = readFileSync(REFERENCE_PATH, 'utf8');
  const section = page.slice(page.indexOf(`\n## ${path}\n`) + 1).split(/\n## /)[0]!;
  const out = new Map<string, string>();
  for (const m of section.matchAll(/^- `([^`]+)`: .*?(?: Default: `([^`]*)`\.)?$/gm))
    if (m[2] !== undefined) out.set(m[1]!, m[2]);
  return out;
}

const DOCS = join(import.meta.dirname, '../../docs');

/** The task pages that hold tables of a command's flags (docs/reference.md is generated), and whose flags they are. */
const PAGES_WITH_FLAG_TABLES: Record<string, string> = {
  'batch.md': 'extract',
  'journal.md': 'extract',
  'outputs.md': 'extract',
  'serve.md': 'extract serve',
};

/**
 * What the hand-written flag tables of a page say that the flag tables contradict: a flag the
 * command does not have, or a default other than the one --help shows (a "Default" column, or
 * "default `x`" in the row).
 */
function pageContradictions(page: string, text: string, table: FlagTable): string[] {
  const out: string[] = [];
  const command = new Command('x');
  addFlags(command, table);
  const byLong = new Map(command.options.map((o) => [o.long, o]));
  let defaultColumn = -1;
  for (const line of text.split('\n')) {
    if (!line.startsWith('|')) {
      defaultColumn = -1;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    const header = cells.findIndex((c) => /^default$/i.test(c));
    if (header >= 0) defaultColumn = header;
    if (!cells[0]?.startsWith('`-')) continue;
    const longs = [...cells[0].matchAll(/(--[a-z][a-z-]*)/g)].map((m) => m[1]!);
    for (const long of longs) {
      const option = byLong.get(long);
      if (option === undefined) {
        out.push(`${page}: ${long} is no flag of the command`);
        continue;
      }
      const written =
        defaultColumn >= 0 ? /^`([^`]+)`$/.exec(cells[defaultColumn] ?? '')?.[1] : /default `([^`]+)`/.exec(line)?.[1];
      const shown = option.defaultValue === undefined ? undefined : String(option.defaultValue);
      if (written !== undefined && shown !== undefined && written !== shown)
        out.push(`${page}: ${long} says default ${written}, --help says ${shown}`);
    }
  }
  return out;
}

describe('flags: one table per command', () => {
  it('every option of every command is in its table, and every flag of a table is an option, in order', () => {
    expect(mismatches(buildProgram(), FLAG_TABLES)).toEqual([]);
    // Every command that takes flags of its own has a table (extract, serve, get, listen, status, journal compact,
    // watch, version, and the five config commands).
    expect(Object.keys(FLAG_TABLES)).toHaveLength(13);
  });

  it('the check sees an option added beside the table, a flag of a table left out, and a table of no command', () => {
    const program = buildProgram();
    program.commands.find((c) => c.name() === 'get')!.option('--stray', 'written outside the table');
    const { local: _left, ...withoutLocal } = RUN_FLAGS;
    const tables = { ...FLAG_TABLES, extract: { ...withoutLocal }, 'extract gone': {} };
    expect(mismatches(program, tables)).toEqual([
      'extract: --local is an option, not in its table',
      'extract get: --stray is an option, not in its table',
      'extract gone: a table of no command',
    ]);
    const reordered = { ...FLAG_TABLES, 'extract version': {}, 'extract get': {} };
    expect(mismatches(buildProgram(), reordered)).toContain(
      'extract get: -o, --out <path> is an option, not in its table',
    );
  });

  it("the reference page shows each flag's default as its table declares it, and no default for a flag without one", () => {
    let checked = 0;
    for (const [path, table] of Object.entries(FLAG_TABLES)) {
      const page = pageDefaults(path);
      const none = parseFlags(table, {});
      for (const [key, spec] of Object.entries(table)) {
        const shown = page.get(flagsOf(key, spec));
        if (!('default' in spec) || spec.default === undefined) {
          expect(shown, `${path} ${key}`).toBeUndefined();
          continue;
        }
        expect(shown, `${path} ${key}`).toBeDefined();
        // The page's text, read as if typed, is the value a command line without the flag gets.
        expect(parseFlags(table, { [attributeOf(key, spec)]: shown })[key], `${path} ${key}`).toEqual(none[key]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it("the task pages' hand-written flag tables name flags the command has, with the defaults --help shows", () => {
    const pages = readdirSync(DOCS).filter((f) => f.endsWith('.md') && f !== 'reference.md');
    const withTables = pages.filter((f) => /^\| `-/m.test(readFileSync(join(DOCS, f), 'utf8')));
    expect(withTables.sort()).toEqual(Object.keys(PAGES_WITH_FLAG_TABLES).sort());
    const found: string[] = [];
    for (const [page, path] of Object.entries(PAGES_WITH_FLAG_TABLES))
      found.push(...pageContradictions(page, readFileSync(join(DOCS, page), 'utf8'), FLAG_TABLES[path]!));
    expect(found).toEqual([]);
    // The check itself, on a page that is wrong both ways.
    const wrong = ['| Flag | Default | Meaning |', '| --- | --- | --- |', '| `-c, --concurrency N` | `8` | x |'];
    wrong.push('| `--no-such-flag` | | x |', '', '| flag | meaning |', '| `--poll-timeout D` | default `10m` |');
    expect(pageContradictions('p.md', wrong.join('\n'), RUN_FLAGS)).toEqual([
      'p.md: --concurrency says default 8, --help says 4',
      'p.md: --no-such-flag is no flag of the command',
      'p.md: --poll-timeout says default 10m, --help says 15m',
    ]);
  });

  it("a command line without flags parses to the tables' defaults, through commander as the CLI runs it", () => {
    for (const [path, cmd] of commands(buildProgram())) {
      const table = FLAG_TABLES[path];
      if (table === undefined) continue;
      expect(parseFlags(table, cmd.opts()), path).toEqual(parseFlags(table, {}));
    }
    // The numbers themselves, as literals, once: test/cli/flags.test.ts.
    const run = parseFlags(RUN_FLAGS, {});
    expect(run.route).toBe('auto');
    expect(run.ignore).toEqual([]);
    expect([run.fresh, run.noState, run.noProgress, run.state, run.maxCredits, run.settle]).toEqual([
      false,
      false,
      false,
      undefined,
      undefined,
      0,
    ]);
  });

  it('--help shows no default for a repeatable flag: an empty list is no value to show', () => {
    for (const [path, cmd] of commands(buildProgram())) {
      const help = cmd.helpInformation();
      expect(help, path).not.toContain('(default: [])');
    }
    expect(buildProgram().helpInformation()).toMatch(/--explode <field>/);
  });

  it("--help's inputs name every kind of input the run reads: URLs, archives and mail besides files", () => {
    const help = buildProgram().helpInformation().replace(/\s+/g, ' ');
    expect(help).toMatch(/inputs files, directories.*http\(s\):\/\/ URLs.*\.zip, \.tar, \.tar\.gz, \.eml/);
  });

  it('values as typed: sizes, durations, counts, lists, switches, --no-state and --no-progress', () => {
    const program = buildProgram();
    program.parseOptions([
      ...['--inline-max', '512KB', '-c', '8', '--poll-timeout', '90', '--max-credits', '0'],
      ...['--ignore', 'a', '--ignore', 'b', '--fresh', '--no-progress', '--state', 'j.jsonl', '--no-state'],
    ]);
    const values = parseFlags(RUN_FLAGS, program.opts());
    expect(values).toMatchObject({
      inlineMax: 512_000,
      concurrency: 8,
      pollTimeout: 90_000,
      maxCredits: 0,
      ignore: ['a', 'b'],
      fresh: true,
      noProgress: true,
      // The later of --state and --no-state wins, as commander reads them.
      noState: true,
      state: undefined,
    });
    const later = buildProgram();
    later.parseOptions(['--no-state', '--state', 'j.jsonl']);
    expect(parseFlags(RUN_FLAGS, later.opts())).toMatchObject({ noState: false, state: 'j.jsonl' });
  });

  it('a mistyped value is a usage error naming the flag as typed', () => {
    const usage = (table: FlagTable, raw: Record<string, unknown>): string => {
      try {
        parseFlags(table, raw);
      } catch (err) {
        expect(err).toBeInstanceOf(ExtractError);
        expect((err as ExtractError).code).toBe('usage');
        return (err as Error).message;
      }
      throw new Error('no error');
    };
    expect(usage(RUN_FLAGS, { concurrency: '0' })).toBe('-c/--concurrency: "0" must be a whole number of at least 1');
    expect(usage(RUN_FLAGS, { maxCredits: '-1' })).toBe('--max-credits: "-1" must be a whole number of at least 0');
    expect(usage(RUN_FLAGS, { inlineMax: '8 parsecs' })).toMatch(/^--inline-max: "8 parsecs" is not a size/);
    expect(usage(RUN_FLAGS, { lease: '500ms' })).toBe(
      '--lease must be at least 1s: a shorter lease is lost to an ordinary pause',
    );
    expect(usage(WATCH_FLAGS, { rescan: '0.5s' })).toBe(
      '--rescan must be at least 1s: each rescan lists every watched folder',
    );
    expect(usage(RUN_FLAGS, { route: 'fast' })).toBe('--route "fast": use auto, inline, upload');
    expect(usage(SERVE_FLAGS, { listenPort: '70000' })).toBe(
      '--listen-port "70000" is not a port number: use 0-65535 (0 picks a free port)',
    );
    // --explode: one dotted path, parsed by its table (get's too), never two.
    expect(parseFlags(GET_FLAGS, { explode: ['order.lines'] }).explode).toBe('order.lines');
    expect(parseFlags(RUN_FLAGS, {}).explode).toBeUndefined();
    expect(usage(RUN_FLAGS, { explode: ['a', 'b'] })).toMatch(/^--explode takes one table per run, got a, b/);
    expect(usage(GET_FLAGS, { explode: ['a..b'] })).toMatch(/^--explode "a..b" is not a field path/);
    // One port rule, one wording, for both servers.
    expect(usage(LISTEN_FLAGS, { port: '70000' })).toBe(
      '--port "70000" is not a port number: use 0-65535 (0 picks a free port)',
    );
  });

  it("the values' types are the tables' (no type written by hand)", () => {
    expectTypeOf<RunValues['concurrency']>().toEqualTypeOf<number>();
    expectTypeOf<RunValues['maxCredits']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RunValues['route']>().toEqualTypeOf<'auto' | 'inline' | 'upload'>();
    expectTypeOf<RunValues['state']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<RunValues['noState']>().toEqualTypeOf<boolean>();
    expectTypeOf<RunValues['ignore']>().toEqualTypeOf<string[]>();
    expectTypeOf<RunValues['explode']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<WatchValues['settle']>().toEqualTypeOf<number>();
    expectTypeOf<ServeValues['port']>().toEqualTypeOf<number>();
    expectTypeOf<ServeValues['smtpPort']>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error: a watcher has no --dry-run
    expectTypeOf<WatchValues['dryRun']>().toBeBoolean();
  });
});
