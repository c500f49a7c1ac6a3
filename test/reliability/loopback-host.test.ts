import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../src/net/loopback.ts';

describe('loopback: which --host earns no warning', () => {
  it('127.0.0.0/8, ::1 (bracketed or not) and localhost are loopback; everything else is not', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '127.0.0.1.example', 'localhost.example', '::2', ''])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
