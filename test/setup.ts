import { afterAll, afterEach } from 'vitest';
import { runFileCleanups, runTestCleanups } from './helpers/cleanup.ts';

// Loaded before every test file (vitest setupFiles): the helpers' clean-up runs after each
// test and each file, whether or not the file's modules were loaded fresh.
afterEach(runTestCleanups);
afterAll(runFileCleanups);
