import type { FastifyInstance } from 'fastify';
import { EMULATOR_PREFIX, TopUpRequest } from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import type { Ledger } from '../ledger.ts';
import { parseBody } from './http.ts';

/**
 * The emulator's own surface under /_emulator/, outside the emulated API: for people
 * and for tests of users' pipelines. It needs no API key (the server binds loopback).
 */
export function emulatorRoutes(input: { ledger: Ledger; deps: EmulatorDeps }) {
  const { ledger, deps } = input;
  return async (app: FastifyInstance) => {
    app.get(`${EMULATOR_PREFIX}/health`, async () => ({ ok: true }));
    app.get(`${EMULATOR_PREFIX}/ledger`, async () => ledger.body());
    app.post(`${EMULATOR_PREFIX}/credits`, async (request) => {
      const { pages } = parseBody(TopUpRequest, request.body);
      ledger.topUp(pages, deps.now());
      return { balance: ledger.balance() };
    });
  };
}
