/**
 * Durations as people read them in output (a summary, the ETA, a warning): "850 ms", "4.2 s",
 * "3 min 5 s". How people write them on a command line is flags/units.ts's.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
