/**
 * Node 22 calls node:sqlite experimental and says so on stderr the first time it loads: every
 * default run would print it (the user's journal is SQLite), and cron mails whatever reaches
 * stderr. That one warning is dropped; every other warning is printed as Node prints it.
 */
export function hideSqliteExperimentalWarning(proc: NodeJS.Process = process): void {
  const printers = proc.listeners('warning');
  if (printers.length === 0) return;
  proc.removeAllListeners('warning');
  proc.on('warning', (warning) => {
    if (warning.name === 'ExperimentalWarning' && /\bSQLite\b/i.test(warning.message)) return;
    for (const print of printers) print(warning);
  });
}
