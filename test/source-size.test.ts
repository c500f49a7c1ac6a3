import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

/** A source file that grows past this usually holds two ideas (STYLE.md): split it by idea. */
const MOST_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(dir, name));
}

it('no source file is over 400 lines', () => {
  const over = sourceFiles('src')
    .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > MOST_LINES)
    .map(({ path, lines }) => `${path} (${lines} lines)`);
  expect(over).toEqual([]);
});
