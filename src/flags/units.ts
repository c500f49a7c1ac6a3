import { ExtractError } from '../errors.ts';

/**
 * Sizes and durations as people write them on a command line. Sizes use powers of 1000
 * for KB/MB/GB (as file managers show them) and powers of 1024 for KiB/MiB/GiB.
 */

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  k: 1000,
  m: 1000 ** 2,
  g: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};

const DURATION_UNITS: Record<string, number> = {
  // A bare number is seconds: "--poll-timeout 900".
  '': 1000,
  ms: 1,
  s: 1000,
  sec: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
};

const QUANTITY = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i;

/** "500000", "512KB", "8MB", "10MiB" -> bytes. */
export function parseSize(text: string, flag = 'size'): number {
  const m = QUANTITY.exec(text);
  const unit = m ? SIZE_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new ExtractError(
      'usage',
      `${flag}: "${text}" is not a size: write bytes or a number with KB, MB, GB (or KiB, MiB, GiB), e.g. 8MB`,
    );
  }
  return Math.round(Number(m[1]) * unit);
}

/** "2s", "500ms", "15m", "1h", bare "30" (seconds) -> milliseconds. */
export function parseDuration(text: string, flag = 'duration'): number {
  const m = QUANTITY.exec(text);
  const unit = m ? DURATION_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  if (!m || unit === undefined) {
    throw new ExtractError(
      'usage',
      `${flag}: "${text}" is not a duration: write e.g. 500ms, 2s, 15m, 1h (a bare number is seconds)`,
    );
  }
  return Math.round(Number(m[1]) * unit);
}

/** A positive integer flag such as -c 8 or --max-credits 500. */
export function parseCount(text: string, flag: string, min = 1): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min)
    throw new ExtractError('usage', `${flag}: "${text}" must be a whole number of at least ${min}`);
  return n;
}

/**
 * A duration as a flag's default is written ("2s", "15m"): the largest unit that divides it
 * exactly, so parseDuration reads it back unchanged and --help shows what people would type.
 */
export function durationFlag(ms: number): string {
  // 0 reads as "0s", not "0h": the unit people write for "none".
  if (ms > 0 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  // 60 s stays "60s": minutes only from two on, as people say them.
  if (ms % 60_000 === 0 && ms >= 120_000) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A size as a flag's default is written ("5MB"), read back unchanged by parseSize. */
export function sizeFlag(bytes: number): string {
  for (const [unit, factor] of [
    ['GB', 1000 ** 3],
    ['MB', 1000 ** 2],
    ['KB', 1000],
  ] as const) {
    if (bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}
