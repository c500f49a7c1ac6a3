import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import {
  githubAnchor,
  MAN_PATH,
  REFERENCE_PATH,
  renderMan,
  renderMarkdown,
  walkProgram,
} from '../../scripts/cli-reference.ts';
import { buildProgram } from '../../src/cli/main.ts';

/**
 * The docs as a map: the CLI reference and the man page are what
 * `npm run docs` makes from the program the CLI runs, every command and flag is on the
 * reference page, and every relative link of README.md and docs/ leads somewhere that exists.
 */
const ROOT = resolve(import.meta.dirname, '../..');

function markdownFiles(): string[] {
  const out = [join(ROOT, 'README.md'), join(ROOT, 'ARCHITECTURE.md')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) out.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return out;
}

/** The text outside fenced code blocks and inline code, where Markdown links are links. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors of a file: each heading's, the second of a name getting -1, and <a id>/name. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = readFileSync(path, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    // The heading's text as rendered: code spans keep their content, links their text.
    const rendered = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const base = githubAnchor(rendered);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

function relativeLinks(path: string): string[] {
  const links: string[] = [];
  for (const m of prose(readFileSync(path, 'utf8')).matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    links.push(target);
  }
  return links;
}

describe('docs', () => {
  it('docs/reference.md and man/extract.1 are what npm run docs makes from the code', () => {
    const commands = walkProgram();
    expect(readFileSync(REFERENCE_PATH, 'utf8'), 'docs/reference.md is stale: run npm run docs').toBe(
      renderMarkdown(commands),
    );
    expect(readFileSync(MAN_PATH, 'utf8'), 'man/extract.1 is stale: run npm run docs').toBe(renderMan(commands));
    // What --help prints after the options (exit codes, examples) is on the page too.
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toContain('Exit codes:');
  });

  it('every command, argument and flag of the program is on the reference page', () => {
    const page = readFileSync(REFERENCE_PATH, 'utf8');
    const headings = new Set([...page.matchAll(/^## (.+)$/gm)].map((m) => m[1]!));
    let flags = 0;
    const visit = (cmd: Command, parents: string[]): void => {
      const path = [...parents, cmd.name()].join(' ');
      expect(headings.has(path), `## ${path}`).toBe(true);
      const section = page.slice(page.indexOf(`\n## ${path}\n`)).split(/\n## /)[1]!;
      for (const option of cmd.options) {
        for (const flag of [option.long, option.short]) {
          if (flag === undefined) continue;
          expect(section, `${path} ${flag}`).toMatch(new RegExp(`^- \`[^\`]*${flag}\\b`, 'm'));
          flags++;
        }
      }
      for (const arg of cmd.registeredArguments) expect(section, `${path} <${arg.name()}>`).toContain(arg.name());
      for (const sub of cmd.commands) visit(sub, [...parents, cmd.name()]);
    };
    visit(buildProgram(), []);
    expect(flags).toBeGreaterThan(50);
  });

  it('every relative link in README.md, ARCHITECTURE.md and docs/ resolves, #anchors included', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles()) {
      for (const link of relativeLinks(file)) {
        checked++;
        const [pathPart, anchor] = link.split('#', 2) as [string, string | undefined];
        const target = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
        const where = `${relative(ROOT, file)}: ${link}`;
        // The spec lies beside the repository (../shared/spec), not in it: a clone elsewhere has no such file.
        if (relative(ROOT, target).startsWith('..')) continue;
        if (!existsSync(target)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor !== undefined && anchor !== '') {
          if (!target.endsWith('.md')) broken.push(`${where} (an anchor into a file that is not Markdown)`);
          else if (!anchorsOf(target).has(anchor)) broken.push(`${where} (no heading #${anchor})`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('every page under docs/ opens with a task: "To ..., run/read ..." right under its title', () => {
    const pages = markdownFiles().filter((f) => f.startsWith(join(ROOT, 'docs')));
    expect(pages.length).toBeGreaterThan(20);
    for (const page of pages) {
      const [title, first] = readFileSync(page, 'utf8').split(/\n\n+/);
      expect(title, relative(ROOT, page)).toMatch(/^# /);
      expect(first, relative(ROOT, page)).toMatch(/^To /);
    }
  });

  it('the link check sees a broken file and a broken anchor', () => {
    // The checker itself: a heading's anchor as GitHub makes it, and a duplicate's -1.
    expect(githubAnchor('`extract serve`: the service on your machine')).toBe(
      'extract-serve-the-service-on-your-machine',
    );
    expect(githubAnchor('Exit codes (0-130)')).toBe('exit-codes-0-130');
    expect(anchorsOf(REFERENCE_PATH).has('extract-config-set')).toBe(true);
    expect(anchorsOf(REFERENCE_PATH).has('extract-config-sett')).toBe(false);
  });

  it('the man page renders without a warning (man -l, groff or nroff)', async () => {
    const env = { ...process.env, MANWIDTH: '100', MANPAGER: 'cat', PAGER: 'cat', LANG: 'C.UTF-8' };
    const has = async (tool: string): Promise<boolean> =>
      (await execa('sh', ['-c', `command -v ${tool}`], { reject: false })).exitCode === 0;
    if (await has('groff')) {
      const checked = await execa('groff', ['-man', '-Tutf8', '-ww', '-z', MAN_PATH], { env });
      expect(checked.stderr).toBe('');
    }
    let text: string;
    if (await has('man')) text = (await execa('man', ['-l', MAN_PATH], { env })).stdout;
    else if (await has('nroff')) text = (await execa('nroff', ['-man', MAN_PATH], { env })).stdout;
    else {
      // No formatter: every request line is one of the man macros the script writes.
      const requests = readFileSync(MAN_PATH, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('.'));
      for (const r of requests) expect(r).toMatch(/^\.(\\"|TH|SH|SS|TP|PP|B|I|nf|fi)( |$)/);
      text = readFileSync(MAN_PATH, 'utf8');
    }
    expect(text).toMatch(/EXTRACT\(1\)|\.TH EXTRACT 1/);
    for (const c of walkProgram()) expect(text).toContain(c.path);
  });

  it('package.json installs the man page and ships it in the tarball', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const man: string[] = [pkg.man].flat();
    expect(man.map((m) => resolve(ROOT, m))).toContain(MAN_PATH);
    expect(pkg.files).toContain('man');
    expect(pkg.scripts.docs).toContain('node scripts/cli-reference.ts');
  });

  it('man extract works after a global install (npm links the man field into share/man)', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'extract-man-'));
    try {
      // A link install of this folder: no registry, no scripts; npm links bin and man into the prefix.
      await execa('npm', ['install', '-g', '--prefix', prefix, '--ignore-scripts', '--no-audit', '--no-fund', ROOT]);
      const page = join(prefix, 'share', 'man', 'man1', 'extract.1');
      expect(readFileSync(page, 'utf8')).toBe(readFileSync(MAN_PATH, 'utf8'));
      if ((await execa('sh', ['-c', 'command -v man'], { reject: false })).exitCode === 0) {
        const shown = await execa('man', ['extract'], {
          env: { ...process.env, MANPATH: join(prefix, 'share', 'man'), MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80' },
        });
        expect(shown.stdout).toContain('EXTRACT(1)');
      }
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });
});
