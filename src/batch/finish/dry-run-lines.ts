/** One file of a dry run: what the run would do with it (the route, or resume/skip/leave), its pages, and why. */
export type DryRunLine = { word: string; pages: number | null | undefined; file: string; why: string };

/**
 * The dry run's list: a line per file, then the credits, then each reason once. A reason said on
 * every line hid the files among them ("(at most --inline-max (3300000 bytes))" a thousand
 * times); each word's most common reason goes below the list, and a file whose reason is
 * another (an upload forced by size among uploads over --inline-max) keeps its own on its line.
 */
export function dryRunText(lines: readonly DryRunLine[], credits: number): string {
  const counts = new Map<string, Map<string, number>>();
  for (const l of lines) {
    const whys = counts.get(l.word) ?? new Map<string, number>();
    whys.set(l.why, (whys.get(l.why) ?? 0) + 1);
    counts.set(l.word, whys);
  }
  const common = new Map<string, string>();
  for (const [word, whys] of counts) common.set(word, [...whys].sort((a, b) => b[1] - a[1])[0]![0]);
  const out = lines.map((l) => {
    const pages =
      l.pages === undefined
        ? `${'-'.padStart(6)}      `
        : `${String(l.pages ?? '?').padStart(6)} ${l.pages === 1 ? 'page ' : 'pages'}`;
    const own = common.get(l.word) === l.why ? '' : `  (${l.why})`;
    return `${l.word.padEnd(8)}${pages}  ${l.file}${own}`;
  });
  out.push(`${'total'.padEnd(8)}${String(credits).padStart(6)} credit${credits === 1 ? '' : 's'}`);
  for (const [word, why] of common) out.push(`${word}: ${why}`);
  return `${out.join('\n')}\n`;
}
