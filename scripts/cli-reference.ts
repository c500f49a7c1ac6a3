/**
 * `npm run docs`: the CLI reference (docs/reference.md) and the man page (man/extract.1), both
 * walked from the program object the CLI runs (buildProgram in src/cli/main.ts), built without
 * parsing anything. test/docs/docs.proc.test.ts checks that the files checked in equal this output,
 * so a flag added without `npm run docs` fails the suite.
 *
 * `node scripts/cli-reference.ts` writes both files; `--check` writes nothing and exits 1 when
 * either differs from what is checked in.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Argument, Command, Option } from 'commander';
import { buildProgram } from '../src/cli/main.ts';
import { VERSION } from '../src/cli/version.ts';
import { jsonSchemaDocument } from '../src/outputs/json-shapes.ts';

const ROOT = join(import.meta.dirname, '..');
export const REFERENCE_PATH = join(ROOT, 'docs', 'reference.md');
export const MAN_PATH = join(ROOT, 'man', 'extract.1');
/** What --json prints, as JSON Schema, made from src/outputs/json-shapes.ts. */
export const JSON_SCHEMA_PATH = join(ROOT, 'docs', 'json-schema.json');

/** One command as the reference shows it: its full name, usage, and what --help adds after. */
export type CommandInfo = {
  /** "extract", "extract serve", "extract config set". */
  path: string;
  description: string;
  usage: string;
  arguments: { name: string; description: string; required: boolean; variadic: boolean; default?: string }[];
  options: OptionInfo[];
  /** The text --help prints after the options (exit codes, examples), as written. */
  after: string;
};

export type OptionInfo = {
  flags: string;
  long?: string;
  short?: string;
  description: string;
  default?: string;
  choices?: string[];
};

/** Every command, the root first, depth first, in the order `extract --help` lists them. */
export function walkProgram(program: Command = buildProgram()): CommandInfo[] {
  const out: CommandInfo[] = [];
  const visit = (cmd: Command, parents: string[]): void => {
    const help = cmd.createHelp();
    const path = [...parents, cmd.name()].join(' ');
    out.push({
      path,
      description: cmd.description(),
      usage: `${[...parents, cmd.name()].join(' ')} ${cmd.usage()}`.trim(),
      arguments: cmd.registeredArguments.map((a) => argumentInfo(a)),
      options: help.visibleOptions(cmd).map((o) => optionInfo(o)),
      after: afterHelp(cmd),
    });
    for (const sub of help.visibleCommands(cmd)) {
      // commander's implicit "help [command]" is listed, not registered: it has nothing to walk.
      if (!cmd.commands.includes(sub)) continue;
      visit(sub, [...parents, cmd.name()]);
    }
  };
  visit(program, []);
  return out;
}

function argumentInfo(a: Argument): CommandInfo['arguments'][number] {
  const info: CommandInfo['arguments'][number] = {
    name: a.name(),
    description: a.description,
    required: a.required,
    variadic: a.variadic,
  };
  if (a.defaultValue !== undefined) info.default = a.defaultValueDescription ?? JSON.stringify(a.defaultValue);
  return info;
}

function optionInfo(o: Option): OptionInfo {
  const info: OptionInfo = { flags: o.flags, description: o.description };
  if (o.long !== undefined) info.long = o.long;
  if (o.short !== undefined) info.short = o.short;
  // As commander's own help shows a default: for options taking a value, and explicit booleans.
  const shown =
    o.defaultValue !== undefined &&
    !(Array.isArray(o.defaultValue) && o.defaultValue.length === 0) &&
    (o.required || o.optional || (o.isBoolean() && typeof o.defaultValue === 'boolean'));
  if (shown) info.default = o.defaultValueDescription ?? String(o.defaultValue);
  if (o.argChoices !== undefined) info.choices = [...o.argChoices];
  return info;
}

/** What addHelpText('after') adds: the full help, captured, less commander's own part. */
function afterHelp(cmd: Command): string {
  let text = '';
  const saved = cmd.configureOutput();
  // No colours and a fixed width, so the page is the same from a terminal, a pipe or CI.
  cmd.configureOutput({
    ...saved,
    writeOut: (s) => (text += s),
    writeErr: (s) => (text += s),
    getOutHasColors: () => false,
    getOutHelpWidth: () => 80,
  });
  let own: string;
  try {
    cmd.outputHelp();
    own = cmd.helpInformation();
  } finally {
    cmd.configureOutput(saved);
  }
  const i = text.indexOf(own);
  const rest = i >= 0 ? text.slice(0, i) + text.slice(i + own.length) : '';
  return rest.replace(/^\n+/, '').replace(/\s+$/, '');
}

/** GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -. */
export function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}

function mdInline(text: string): string {
  // Descriptions are plain text: keep < and > visible, and * or _ literal.
  return text.replace(/[\\`*_<>[\]|]/g, (c) => `\\${c}`);
}

export function renderMarkdown(commands: CommandInfo[] = walkProgram()): string {
  const lines: string[] = [
    '# CLI reference',
    '',
    `To see every command and flag of \`extract\` ${VERSION}, read this page; \`extract <command> --help\` prints the same, and \`man extract\` after a global install. The task pages (the [README](../README.md) and the [docs index](index.md)) say when to use them.`,
    '',
    '<!-- Generated by `npm run docs` (scripts/cli-reference.ts) from the commander definitions in src/cli/. Do not edit: test/docs/docs.proc.test.ts checks it matches the code. -->',
    '',
    'Commands:',
    '',
  ];
  for (const c of commands)
    lines.push(`- [\`${c.path}\`](#${githubAnchor(c.path)}): ${mdInline(firstSentence(c.description))}`);
  for (const c of commands) {
    lines.push('', `## ${c.path}`, '', mdInline(c.description), '', '```', `Usage: ${c.usage}`, '```');
    if (c.arguments.length > 0) {
      lines.push('', 'Arguments:', '');
      for (const a of c.arguments) {
        const shape = `${a.required ? '<' : '['}${a.name}${a.variadic ? '...' : ''}${a.required ? '>' : ']'}`;
        lines.push(
          `- \`${shape}\`: ${mdInline(a.description)}${a.default === undefined ? '' : ` Default: \`${a.default}\`.`}`,
        );
      }
    }
    if (c.options.length > 0) {
      lines.push('', 'Options:', '');
      for (const o of c.options) {
        let line = `- \`${o.flags}\`: ${mdInline(sentence(o.description))}`;
        if (o.choices !== undefined) line += ` One of: ${o.choices.map((v) => `\`${v}\``).join(', ')}.`;
        if (o.default !== undefined) line += ` Default: \`${o.default}\`.`;
        lines.push(line);
      }
    }
    if (c.after !== '') lines.push('', `More from \`${c.path} --help\`:`, '', '```', c.after, '```');
  }
  return `${lines.join('\n')}\n`;
}

/** A description as a sentence, so "One of" and "Default" read as sentences after it. */
function sentence(text: string): string {
  return text === '' || /[.!?]$/.test(text) ? text : `${text}.`;
}

function firstSentence(text: string): string {
  const cut = text.search(/[.;:](\s|$)/);
  return cut > 0 && cut < 120 ? text.slice(0, cut) : text;
}

/** roff text: backslashes escaped, a leading . or ' made literal, other than ASCII as \\[uXXXX]. */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .split('\n')
    .map((l) => (/^[.']/.test(l) ? `\\&${l}` : l))
    .join('\n')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);
}

function roffFlags(flags: string): string {
  return roff(flags).replace(/-/g, '\\-');
}

export function renderMan(commands: CommandInfo[] = walkProgram()): string {
  const [root, ...subs] = commands;
  if (root === undefined) throw new Error('no program to describe');
  const out: string[] = [
    `.\\" Generated by npm run docs (scripts/cli-reference.ts) from src/cli/. Do not edit.`,
    `.TH EXTRACT 1 "" "extract ${VERSION}" "User Commands"`,
    '.SH NAME',
    `extract \\- ${roff(root.description)}`,
    '.SH SYNOPSIS',
  ];
  for (const c of commands) out.push('.nf', `.B ${roffFlags(c.usage)}`, '.fi');
  out.push('.SH DESCRIPTION', roff(root.description));
  const describe = (c: CommandInfo): void => {
    for (const a of c.arguments) {
      const shape = `${a.required ? '<' : '['}${a.name}${a.variadic ? '...' : ''}${a.required ? '>' : ']'}`;
      out.push('.TP', `.I ${roff(shape)}`, roff(a.description));
    }
    for (const o of c.options) {
      let text = roff(sentence(o.description));
      if (o.choices !== undefined) text += ` One of: ${o.choices.map(roff).join(', ')}.`;
      if (o.default !== undefined) text += ` Default: ${roff(o.default)}.`;
      out.push('.TP', `.B ${roffFlags(o.flags)}`, text);
    }
    if (c.after !== '') out.push('.PP', '.nf', roff(c.after), '.fi');
  };
  out.push('.SH OPTIONS');
  describe(root);
  out.push('.SH COMMANDS');
  for (const c of subs) {
    out.push(`.SS ${roffFlags(c.path)}`, roff(c.description), '.PP', '.nf', `.B ${roffFlags(c.usage)}`, '.fi');
    describe(c);
  }
  out.push(
    '.SH SEE ALSO',
    'The documentation in the package: README.md, and docs/ in the source repository (docs/reference.md is this page as Markdown).',
  );
  return `${out.join('\n')}\n`;
}

if (import.meta.main) {
  const commands = walkProgram();
  const files: [string, string][] = [
    [REFERENCE_PATH, renderMarkdown(commands)],
    [MAN_PATH, renderMan(commands)],
    [JSON_SCHEMA_PATH, `${JSON.stringify(jsonSchemaDocument(), null, 2)}\n`],
  ];
  const check = process.argv.includes('--check');
  let stale = false;
  for (const [path, text] of files) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {}
    if (current === text) continue;
    if (check) {
      process.stderr.write(`${path} is out of date: run npm run docs\n`);
      stale = true;
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  if (stale) process.exitCode = 1;
}
