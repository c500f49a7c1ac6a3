#!/usr/bin/env node
// Thin launcher: everything lives in dist/cli (built from src/cli by `npm run build`).
// The compile cache (Node >= 22.1) keeps start-up close to Node's own after the first run.
import module from 'node:module';

module.enableCompileCache?.();
const { runMain } = await import('../dist/cli/main.js');
await runMain(process.argv);
