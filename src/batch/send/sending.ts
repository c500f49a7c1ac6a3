import type { Route } from '../../outputs/record.ts';
import type { FileStamp } from '../discover.ts';
import type { Job } from '../plan/index.ts';
import type { PipelineContext } from './context.ts';
import type { Endings } from './endings.ts';
import type { InRun } from './in-run.ts';

/** What each step of sending a document shares (pipeline.ts): the context, how documents end, what is in flight. */
export type Sending = {
  c: PipelineContext;
  /** How each document ends: its facts, its record, its pages counted. */
  end: Endings;
  /** The stat of each file being sent as its bytes were read, by ordinal, until its outcome carries it. */
  read: Map<number, FileStamp>;
  /** Outcomes of content hashed while uploaded, by its real key, for a copy of it in the same run. */
  inRun: InRun;
};

/** The route of a job; a resend goes by the shape of the request it repeats. */
export function routeOf(job: Job): Route {
  if (!job.resend) return job.decision.route;
  if (job.resend.storage_path === undefined) return 'inline';
  return job.prior?.route === 'inline->upload' ? 'inline->upload' : 'upload';
}

/** A page_count beside the spec's fields (not promised; the emulator does not send one on submission). */
export function pageCountOf(answer: Record<string, unknown>): number | null {
  const n = answer.page_count;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null;
}
