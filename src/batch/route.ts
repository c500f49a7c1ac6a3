import type { ROUTES } from '../flags/batch.ts';

/** How a file travels: base64 in the extract body, or upload-and-poll. */
type RouteChoice = 'inline' | 'upload';
/** --route's choices (src/flags/batch.ts declares them). */
export type RouteFlag = (typeof ROUTES)[number];

/** Spec, "Limits": files over 300 MB must use the upload-and-poll route. */
export const UPLOAD_ONLY_ABOVE = 300 * 1000 * 1000;

export type RouteDecision = { route: RouteChoice; why: string };

/**
 * How files of a size travel, for one --route flag and --inline-max: each decision is made once,
 * so a plan of 20,000 files shares a few objects.
 */
export function routeChooser(flag: RouteFlag, inlineMax: number): (size: number) => RouteDecision {
  const tooLarge: RouteDecision = { route: 'upload', why: 'over 300 MB, which the service accepts only by upload' };
  const chosen: RouteDecision | undefined =
    flag === 'inline'
      ? { route: 'inline', why: '--route inline' }
      : flag === 'upload'
        ? { route: 'upload', why: '--route upload' }
        : undefined;
  const small: RouteDecision = { route: 'inline', why: `at most --inline-max (${inlineMax} bytes)` };
  const large: RouteDecision = { route: 'upload', why: `over --inline-max (${inlineMax} bytes)` };
  return (size) => (size > UPLOAD_ONLY_ABOVE ? tooLarge : (chosen ?? (size <= inlineMax ? small : large)));
}
