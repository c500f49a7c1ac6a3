import { describe, expect, it } from 'vitest';
import {
  type Action,
  countedEarlier,
  fetchable,
  failsAgain,
  rerunAction,
  resendOf,
  setAsideEarlier,
  uncertainRequest,
} from '../../src/cost/rerun.ts';
import type { KnownState } from '../../src/journal/journal.ts';

const common = { at: '2026-01-01T00:00:00.000Z', sha256: 's', target: 't', file: 'a.pdf' };
const request = { idempotency_key: 'extract-k', file_name: 'a.pdf', file_type: 'application/pdf' };
const completed: KnownState = {
  fact: 'completed',
  ...common,
  route: 'inline',
  document_id: 'doc-1',
  page_count: 1,
  results: {},
};
const submitted: KnownState = { fact: 'submitted', ...common, route: 'upload', document_id: 'doc-2', page_count: 3 };
const sending: KnownState = { fact: 'sending', ...common, route: 'inline', request };
const failed = (more: Partial<Extract<KnownState, { fact: 'failed' }>>): KnownState => ({
  fact: 'failed',
  ...common,
  route: 'inline',
  document_id: null,
  reason: 'x',
  retryable: true,
  ...more,
});
const downFree = failed({ charge: 'none' });
const judged = failed({ charge: 'none', retryable: false });
const inDoubt = failed({ charge: 'uncertain', request });
const refused = failed({ charge: 'uncertain', document_id: 'doc-3', route: 'upload', retryable: false });
const refunded = failed({ charge: 'refunded', document_id: 'doc-4', retryable: false });
const refundedMayPass = failed({ charge: 'refunded', document_id: 'doc-6' });

/** prior -> [plain rerun, --retry-failed, --fresh, another worker's fact (concurrent)] */
const TABLE: Array<[string, KnownState | undefined, [Action, Action, Action, Action]]> = [
  ['unknown', undefined, ['submit', 'submit', 'submit', 'submit']],
  ['completed', completed, ['done', 'done', 'submit', 'done']],
  ['submitted', submitted, ['resume', 'resume', 'submit', 'resume']],
  ['in flight at a crash', sending, ['leave', 'submit', 'submit', 'leave']],
  ['failed, free, may pass (service down)', downFree, ['submit', 'submit', 'submit', 'leave']],
  ['failed, free, judged (refused as it is)', judged, ['leave', 'submit', 'submit', 'leave']],
  ['failed, possibly charged, request kept', inDoubt, ['leave', 'submit', 'submit', 'leave']],
  ['failed, the answer refused, document named', refused, ['leave', 'resume', 'submit', 'leave']],
  ['failed, refunded, judged (ended in error)', refunded, ['leave', 'submit', 'submit', 'leave']],
  ['failed, refunded, may pass (success: false)', refundedMayPass, ['submit', 'submit', 'submit', 'leave']],
  [
    // Written retryable by older versions: sent once more, refunded if it fails again.
    'failed, legacy, refunded (document_id, no charge)',
    failed({ document_id: 'doc-5' }),
    ['submit', 'submit', 'submit', 'leave'],
  ],
  ['failed, legacy, in doubt (request, no charge)', failed({ request }), ['leave', 'submit', 'submit', 'leave']],
  ['failed, legacy, free', failed({}), ['submit', 'submit', 'submit', 'leave']],
];

describe('cost: what a rerun does with what the journal knows', () => {
  it.each(TABLE)('%s', (_name, prior, [plain, retryFailed, fresh, concurrent]) => {
    expect(rerunAction(prior, { retryFailed: false })).toBe(plain);
    expect(rerunAction(prior, { retryFailed: true })).toBe(retryFailed);
    expect(rerunAction(prior, { retryFailed: false, fresh: true })).toBe(fresh);
    expect(rerunAction(prior, { retryFailed: true, concurrent: true })).toBe(concurrent);
    // Another worker's outcome stands over --fresh too.
    expect(rerunAction(prior, { retryFailed: false, fresh: true, concurrent: true })).toBe(concurrent);
  });

  it('the request to resend: the uncertain one, unchanged, unless --fresh or not sent', () => {
    expect(resendOf(sending, 'submit')).toEqual(request);
    expect(resendOf(inDoubt, 'submit')).toEqual(request);
    expect(resendOf(inDoubt, 'submit', true)).toBeUndefined();
    expect(resendOf(inDoubt, 'leave')).toBeUndefined();
    expect(resendOf(inDoubt, 'resume')).toBeUndefined();
    expect(resendOf(downFree, 'submit')).toBeUndefined();
    expect(resendOf(undefined, 'submit')).toBeUndefined();
  });

  it('the uncertain request of a prior state', () => {
    expect(uncertainRequest(sending)).toEqual(request);
    expect(uncertainRequest(inDoubt)).toEqual(request);
    const bare: KnownState = { fact: 'sending', ...common, route: 'inline' };
    expect(uncertainRequest(bare)).toBeUndefined();
    expect(uncertainRequest(completed)).toBeUndefined();
    expect(uncertainRequest(submitted)).toBeUndefined();
    expect(uncertainRequest(undefined)).toBeUndefined();
  });

  it('fetchable: submitted, or a document the service made whose answer was refused', () => {
    expect(fetchable(submitted)).toBe(submitted);
    expect(fetchable(refused)).toEqual({ document_id: 'doc-3', route: 'upload' });
    expect(fetchable(failed({ charge: 'uncertain', document_id: 'doc-3', route: null }))).toBeUndefined();
    expect(fetchable(failed({ charge: 'uncertain', document_id: null }))).toBeUndefined();
    expect(fetchable(refunded)).toBeUndefined();
    expect(fetchable(failed({ charge: 'none', document_id: 'doc-6' }))).toBeUndefined();
    expect(fetchable(completed)).toBeUndefined();
    expect(fetchable(sending)).toBeUndefined();
    expect(fetchable(undefined)).toBeUndefined();
  });

  it('set aside: refunded, or free and judged; never what may pass or may have been charged', () => {
    expect(failsAgain({ charge: 'refunded', retryable: true })).toBe(false);
    expect(failsAgain({ charge: 'refunded', retryable: false })).toBe(true);
    expect(failsAgain({ charge: 'none', retryable: false })).toBe(true);
    expect(failsAgain({ charge: 'none', retryable: true })).toBe(false);
    expect(failsAgain({ charge: 'uncertain', retryable: false })).toBe(false);
    expect(failsAgain({ charge: 'uncertain', retryable: true })).toBe(false);
    expect(setAsideEarlier(refunded)).toBe(true);
    expect(setAsideEarlier(judged)).toBe(true);
    expect(setAsideEarlier(failed({ document_id: 'doc-5' }))).toBe(false);
    expect(setAsideEarlier(downFree)).toBe(false);
    expect(setAsideEarlier(inDoubt)).toBe(false);
    expect(setAsideEarlier(refused)).toBe(false);
    expect(setAsideEarlier(completed)).toBe(false);
    expect(setAsideEarlier(sending)).toBe(false);
    expect(setAsideEarlier(undefined)).toBe(false);
  });
});

describe('cost: the document an earlier run counted (a resend answered with it is recognised, not charged)', () => {
  it('a completion or submission that kept its page count; a resend or failure that carried it on; nothing else', () => {
    expect(countedEarlier(completed)).toEqual({ document_id: 'doc-1', page_count: 1 });
    expect(countedEarlier(submitted)).toEqual({ document_id: 'doc-2', page_count: 3 });
    expect(countedEarlier({ ...submitted, page_count: null })).toBeUndefined();
    expect(countedEarlier({ ...completed, page_count: null })).toBeUndefined();
    expect(countedEarlier(sending)).toBeUndefined();
    const counted = { document_id: 'doc-1', page_count: 1 };
    expect(countedEarlier({ ...sending, counted })).toEqual(counted);
    expect(countedEarlier(failed({ charge: 'uncertain', request, counted }))).toEqual(counted);
    expect(countedEarlier(undefined)).toBeUndefined();
  });

  it('an answer refused that named its counted document: fetched by its id with its count, so not counted again', () => {
    const counted = { document_id: 'doc-3', page_count: 2 };
    expect(fetchable(failed({ charge: 'uncertain', document_id: 'doc-3', route: 'upload', counted }))).toEqual({
      document_id: 'doc-3',
      route: 'upload',
      page_count: 2,
    });
  });
});
