#!/usr/bin/env node
// Thin launcher: everything lives in dist/ (the bundle `npm run build` makes from src/).
// Say so plainly on an old Node, rather than failing deep inside a dependency.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  // `npx extract` helps only in a clone, whose devDependencies hold the Node 24 it pins; elsewhere
  // a bare `npx extract` would fetch another package from the registry.
  const { existsSync } = process.getBuiltinModule('node:fs');
  const inClone = existsSync(new URL('../node_modules/node/package.json', import.meta.url));
  process.stderr.write(
    `extract needs Node.js 22.13 or newer (node:sqlite); this is ${process.version}. ${
      inClone
        ? 'In this clone, run it as npx extract: npm runs it on the Node 24 the project pins.'
        : 'Install Node.js 24 LTS (https://nodejs.org/, or nvm install 24), then run extract again.'
    }\n`,
  );
  process.exit(2);
}
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // The one answer that needs nothing but package.json: no commander, nothing of dist/.
  // process.getBuiltinModule, not `import`: an ESM import of a Node module runs every lazy getter
  // of its exports (node:fs loads fs/promises and the streams), a quarter of --version's time.
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  // The same line as src/cli/main.ts's VERSION_LINE: the runtime and platform, as gh and rclone say theirs.
  writeOut(Buffer.from(`extract ${version} (node ${process.version}, ${process.platform} ${process.arch})\n`));
} else if (args.length === 1 && (args[0] === '--help' || args[0] === '-h') && printedBuiltHelp()) {
  // Done: the text the build printed (scripts/build.ts writeHelpText).
} else {
  // The compile cache keeps start-up close to Node's own after the first run.
  process.getBuiltinModule('node:module').enableCompileCache?.();
  const { runMain } = await import('../dist/cli/main.js');
  await runMain(process.argv);
}

/**
 * `extract --help` to a stdout that is not a terminal (a pipe, a file) is one fixed text: 80
 * columns, no colours. The build printed it into dist/cli/help.txt; copied here by write(2)
 * like src/cli/main.ts's helpOutput, it costs what --version does. False (a terminal, whose
 * width shapes the help, or no such file): the bundle prints it.
 */
function printedBuiltHelp() {
  const { fstatSync, readFileSync } = process.getBuiltinModule('node:fs');
  let text;
  try {
    if (fstatSync(1).isCharacterDevice()) return false;
    text = readFileSync(new URL('../dist/cli/help.txt', import.meta.url));
  } catch {
    return false;
  }
  writeOut(text);
  return true;
}

/**
 * All of `bytes` to stdout by write(2): process.stdout on a pipe or a file loads Node's streams
 * (and net, for a pipe), more than the rest of --version. A pipe that would block takes the rest
 * through process.stdout; a reader gone (extract --help | true) is no error.
 */
function writeOut(bytes) {
  const { writeSync } = process.getBuiltinModule('node:fs');
  let rest = bytes;
  try {
    while (rest.length > 0) rest = rest.subarray(writeSync(1, rest));
  } catch (err) {
    if (err.code === 'EAGAIN') process.stdout.write(rest);
    else if (err.code !== 'EPIPE') throw err;
  }
}
