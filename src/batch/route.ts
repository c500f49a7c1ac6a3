/** How a file travels: base64 in the extract body, or upload-and-poll. */
export type RouteChoice = 'inline' | 'upload';
export type RouteFlag = 'auto' | 'inline' | 'upload';

/**
 * 5 MB: base64 inflates a file by 4/3, so a 5 MB file is a ~6.7 MB body, well under the
 * emulator's default inline cap of 10 MiB, and short enough to finish within one request.
 */
export const DEFAULT_INLINE_MAX = 5_000_000;

/** Spec, "Limits": files over 300 MB must use the upload-and-poll route. */
export const UPLOAD_ONLY_ABOVE = 300 * 1000 * 1000;

export type RouteDecision = { route: RouteChoice; why: string };

export function chooseRoute(size: number, flag: RouteFlag, inlineMax: number): RouteDecision {
  if (size > UPLOAD_ONLY_ABOVE)
    return { route: 'upload', why: 'over 300 MB, which the service accepts only by upload' };
  if (flag === 'inline') return { route: 'inline', why: '--route inline' };
  if (flag === 'upload') return { route: 'upload', why: '--route upload' };
  return size <= inlineMax
    ? { route: 'inline', why: `at most --inline-max (${inlineMax} bytes)` }
    : { route: 'upload', why: `over --inline-max (${inlineMax} bytes)` };
}
