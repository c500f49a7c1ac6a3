#!/usr/bin/env node
// Thin launcher: everything lives in dist/cli (built from src/cli by `npm run build`).
import module from 'node:module';

// Say so plainly on an old Node, rather than failing deep inside a dependency.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `extract needs Node.js 22.12 or newer; this is ${process.version}. Install a current Node LTS, or run it through npm (npx extract), which uses the Node 24 this project pins.\n`,
  );
  process.exit(2);
}
// The compile cache keeps start-up close to Node's own after the first run.
module.enableCompileCache?.();
const { runMain } = await import('../dist/cli/main.js');
await runMain(process.argv);
