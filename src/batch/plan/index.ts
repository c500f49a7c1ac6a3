/** The plan phase's door: the plan and its jobs, as the phases after it and `extract watch` read them. */
export { PLAN_WINDOW, planBatch } from './plan.ts';
export { QueuedJobs, queued, type BatchPlan, type PlanStore } from './planned.ts';
export { emptyFileRule, priorRecord, replan, serviceName, type Job } from './jobs.ts';
export { countPages, countPagesOfBytes } from './pages.ts';
