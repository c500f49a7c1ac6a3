import { describe, expect, it } from 'vitest';
import {
  CHARGES,
  chargeOf,
  costNothing,
  createdNothing,
  FAILURE_CHARGES,
  failureOutcome,
} from '../../src/cost/charge.ts';
import { replayJournal } from '../../src/journal/journal-read.ts';
import { stateKey } from '../../src/journal/journal.ts';

const SHA = 'b'.repeat(64);
const common = { at: '2026-01-01T00:00:00.000Z', sha256: SHA, target: 't1', file: 'a.pdf' };
const request = { idempotency_key: 'extract-k', file_name: 'a.pdf', file_type: 'application/pdf' };
const failed = (more: Record<string, unknown>) => ({
  fact: 'failed' as const,
  ...common,
  route: 'inline' as const,
  document_id: null,
  reason: 'x',
  retryable: true,
  ...more,
});

describe('cost: what a failure cost', () => {
  it('one Charge type; failures are written with three of its values, as every journal has', () => {
    expect(CHARGES).toEqual(['none', 'refunded', 'uncertain', 'charged']);
    expect(FAILURE_CHARGES).toEqual(['none', 'uncertain', 'refunded']);
  });

  it('a written charge is what the failure cost, whatever else the fact holds', () => {
    expect(chargeOf({ fact: 'failed', charge: 'none', request, document_id: 'doc-1' })).toBe('none');
    expect(chargeOf({ fact: 'failed', charge: 'uncertain', document_id: null })).toBe('uncertain');
    expect(chargeOf({ fact: 'failed', charge: 'refunded', request, document_id: null })).toBe('refunded');
  });

  it('a fact of a format-1 journal (no charge) reads as it always did', () => {
    expect(chargeOf({ fact: 'failed', request, document_id: 'doc-1' })).toBe('uncertain');
    expect(chargeOf({ fact: 'failed', document_id: 'doc-1' })).toBe('refunded');
    expect(chargeOf({ fact: 'failed', document_id: null })).toBe('none');
  });

  it('journal: old-format failed facts, read from text, keep their meaning', () => {
    // Lines as version 1 wrote them: no `journal` line, no `charge`.
    const lines = [
      { ...failed({ document_id: 'doc-9' }), sha256: 'c'.repeat(64) },
      { ...failed({ request }), sha256: 'd'.repeat(64) },
      { ...failed({}), sha256: 'e'.repeat(64), retryable: false },
    ];
    const { known } = replayJournal(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const charge = (sha: string) => {
      const state = known.get(stateKey(sha, 't1'));
      return state?.fact === 'failed' ? chargeOf(state) : state?.fact;
    };
    expect(charge('c'.repeat(64))).toBe('refunded');
    expect(charge('d'.repeat(64))).toBe('uncertain');
    expect(charge('e'.repeat(64))).toBe('none');
  });

  it('journal: a charge this version does not write (charged) stops the run, as any unknown value', () => {
    const line = `${JSON.stringify(failed({ charge: 'charged' }))}\n`;
    expect(() => replayJournal(line)).toThrow(/cannot read/);
  });

  it('only none means the extract request left no document (journal: unsent)', () => {
    expect(CHARGES.filter(createdNothing)).toEqual(['none']);
  });

  it('cost nothing: a failure that left nothing at the service, and only that', () => {
    expect(costNothing(undefined)).toBe(false);
    expect(costNothing({ fact: 'completed' })).toBe(false);
    expect(costNothing({ fact: 'sending' })).toBe(false);
    expect(costNothing(failed({ charge: 'none' }))).toBe(true);
    expect(costNothing(failed({}))).toBe(true);
    expect(costNothing(failed({ charge: 'uncertain' }))).toBe(false);
    expect(costNothing(failed({ charge: 'refunded' }))).toBe(false);
    expect(costNothing(failed({ document_id: 'doc-1' }))).toBe(false);
  });

  it('the failed fact of each way a document fails', () => {
    // Polled and ended in error: the service judged it. Answered at once (success: false): sent once more.
    expect(failureOutcome({ ended: 'refunded' })).toEqual({ retryable: false, charge: 'refunded' });
    expect(failureOutcome({ ended: 'refunded', answered: { again: false } })).toEqual({
      retryable: true,
      charge: 'refunded',
    });
    expect(failureOutcome({ ended: 'refunded', answered: { again: true } })).toEqual({
      retryable: false,
      charge: 'refunded',
    });
    expect(failureOutcome({ ended: 'answer-refused' })).toEqual({ retryable: false, charge: 'uncertain' });
    const error = { ended: 'error' as const, retryable: true, requestInDoubt: false, documentId: null };
    expect(failureOutcome(error)).toEqual({ retryable: true, charge: 'none' });
    expect(failureOutcome({ ...error, retryable: false })).toEqual({ retryable: false, charge: 'none' });
    expect(failureOutcome({ ...error, requestInDoubt: true })).toEqual({ retryable: true, charge: 'uncertain' });
    expect(failureOutcome({ ...error, documentId: 'doc-1' })).toEqual({ retryable: true, charge: 'uncertain' });
    // A failure that is no answer of the service's (a local error) may pass next time.
    expect(failureOutcome({ ...error, retryable: undefined })).toEqual({ retryable: true, charge: 'none' });
  });
});
