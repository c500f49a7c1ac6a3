import { describe, expect, it } from 'vitest';
import { replayJournal } from '../../src/journal/journal-read.ts';
import { stateKey, type JournalFact } from '../../src/journal/journal.ts';
import { idempotencyKey } from '../../src/batch/send/idempotency.ts';
import { priorRecord, UNCERTAIN_SEND, type Job } from '../../src/batch/plan/jobs.ts';
import { rerunAction, uncertainRequest } from '../../src/cost/rerun.ts';

/** The client's Idempotency-Key and the journal facts that let a rerun resend an uncertain request unchanged. */

const SHA = 'a'.repeat(64);
const common = { at: '2026-01-01T00:00:00.000Z', sha256: SHA, target: 'fp0123456789abcd', file: 'in/a.pdf' };
const line = (f: JournalFact): string => `${JSON.stringify(f)}\n`;

describe('Idempotency-Key', () => {
  it('idempotency key: the same request always has the same key; another name, target or storage path another', () => {
    const inline = { file_name: 'a.pdf', file_type: 'application/pdf' };
    const key = idempotencyKey(SHA, common.target, inline);
    expect(key).toMatch(/^extract-a{32}-fp0123456789abcd-inline-[0-9a-f]{16}$/);
    expect(idempotencyKey(SHA, common.target, { ...inline })).toBe(key);
    expect(idempotencyKey(SHA, common.target, { ...inline, file_name: 'b.pdf' })).not.toBe(key);
    expect(idempotencyKey(SHA, 'another-target', inline)).not.toBe(key);
    const stored = idempotencyKey(SHA, common.target, { ...inline, storage_path: 'prs_invoices/u1/a.pdf' });
    expect(stored).toMatch(/-upload-[0-9a-f]{16}$/);
    expect(idempotencyKey(SHA, common.target, { ...inline, storage_path: 'prs_invoices/u2/a.pdf' })).not.toBe(stored);
    expect(key.length).toBeLessThanOrEqual(255); // the emulator's limit
  });

  it('journal: a send in flight at a crash keeps its request; --retry-failed resends it, a plain rerun leaves it and says why', () => {
    const request = {
      idempotency_key: 'extract-k',
      file_name: 'a.pdf',
      file_type: 'application/pdf',
      storage_path: 'prs_invoices/u1/a.pdf',
    };
    const { known } = replayJournal(line({ fact: 'sending', ...common, route: 'upload', request }));
    const prior = known.get(stateKey(SHA, common.target));
    expect(uncertainRequest(prior)).toEqual(request);
    expect(rerunAction(prior, { retryFailed: false })).toBe('leave');
    expect(rerunAction(prior, { retryFailed: true })).toBe('submit');
    const job = { input: { file: 'in/a.pdf' }, prior } as unknown as Job;
    expect(priorRecord(job)?.error).toBe(UNCERTAIN_SEND);
    expect(UNCERTAIN_SEND).toMatch(/Idempotency-Key/);
  });

  it('journal: a failure after an unanswered request keeps the request; an answered failure does not; older journals still read', () => {
    const request = { idempotency_key: 'extract-k', file_name: 'a.pdf', file_type: 'application/pdf' };
    const uncertain = replayJournal(
      line({
        fact: 'failed',
        ...common,
        route: 'inline',
        document_id: null,
        reason: 'reset',
        retryable: true,
        request,
      }),
    );
    expect(uncertainRequest(uncertain.known.get(stateKey(SHA, common.target)))).toEqual(request);
    const answered = replayJournal(
      line({ fact: 'failed', ...common, route: 'inline', document_id: null, reason: '500', retryable: true }),
    );
    expect(uncertainRequest(answered.known.get(stateKey(SHA, common.target)))).toBeUndefined();
    const old = replayJournal(
      '{"fact":"sending","at":"2026-01-01T00:00:00.000Z","sha256":"x","target":"t","file":"f","route":"inline"}\n',
    );
    expect(old.skipped).toBe(0);
    expect(uncertainRequest(old.known.get(stateKey('x', 't')))).toBeUndefined();
  });
});
