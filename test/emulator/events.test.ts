import { describe, expect, it } from 'vitest';
import { formatEvent, loggableUrl } from '../../src/emulator/events.ts';

describe('serve: log lines', () => {
  it('events: a URL loses its credentials and query before it is printed', () => {
    expect(loggableUrl('https://user:s3cret@hooks.example.com/in?token=abc')).toBe('https://hooks.example.com/in');
    expect(loggableUrl('not a url?sig=deadbeef')).toBe('not a url');
  });

  it('events: request lines go in, delivery lines go out, with status or the failure', () => {
    expect(
      formatEvent({
        type: 'request',
        at: '',
        method: 'GET',
        path: '/api/v1/documents/doc_1',
        status: 200,
        ms: 3,
        document_id: 'doc_1',
      }),
    ).toBe('<-- GET /api/v1/documents/doc_1 200 doc_1 3ms');
    const delivery = {
      type: 'delivery' as const,
      at: '',
      delivery_id: 'dlv_1',
      document_id: 'doc_1',
      integration_id: 'hook',
      method: 'PUT',
      url: 'http://127.0.0.1:1/h',
      attempt: 2,
      ms: 5,
    };
    expect(formatEvent({ ...delivery, status: 503, error: null })).toBe(
      '--> document.processed doc_1 to hook (PUT http://127.0.0.1:1/h) attempt 2: 503 5ms',
    );
    expect(formatEvent({ ...delivery, status: null, error: 'ECONNREFUSED' })).toContain(
      'attempt 2: failed (ECONNREFUSED)',
    );
  });
});
