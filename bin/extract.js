#!/usr/bin/env node
// Thin launcher: everything lives in dist/cli (built from src/cli by `npm run build`).
import { runMain } from '../dist/cli/main.js';

await runMain(process.argv);
