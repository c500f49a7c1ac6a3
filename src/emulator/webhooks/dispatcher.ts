import type { Readable } from 'node:stream';
import type { WebhookIntegration } from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import { loggableUrl, type DeliveryEvent } from '../events.ts';
import type { Faults } from '../faults.ts';
import { requestUrl } from '../../net/request.ts';
import type { AttemptResult, DueDelivery, Outbox } from './outbox.ts';

/**
 * Sends stored deliveries, at least once, on the profile's rules (DeliveryRules). The interface
 * profile's schedule is Svix's: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after
 * each failure (8 attempts over about 27 h), multiplied by `time_scale`. Each delivery is sent on its own, so a slow or failing
 * integration never delays another, and a failure never touches the document.
 */
export const RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

export type ResolvedIntegration = WebhookIntegration & { id: string; parser_id: string };

/** Each attempt, as the line `extract serve` prints for it. */
export type DeliveryLog = (event: DeliveryEvent) => void;

export type Dispatcher = { wake(): void; close(): Promise<void> };

const EXCERPT_BYTES = 256;

/** How a profile delivers (src/emulator/profile.ts): its schedule, time-out, User-Agent, and whether a 4xx is retried. */
export type DeliveryRules = {
  retryScheduleMs: readonly number[];
  timeoutMs: number;
  retryClientErrors: boolean;
  userAgent: string;
};

export function createDispatcher(input: {
  outbox: Outbox;
  integrations: ReadonlyMap<string, ResolvedIntegration>;
  rules: DeliveryRules;
  timeScale: number;
  deps: EmulatorDeps;
  faults: Faults;
  log: DeliveryLog;
}): Dispatcher {
  const { outbox, integrations, rules, timeScale, deps, faults, log } = input;
  const { timeoutMs, userAgent } = rules;
  const inFlight = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const send = async (d: DueDelivery) => {
    const integration = integrations.get(d.integration_id);
    const attempt = d.attempts + 1;
    const result = integration
      ? await attemptWithFaults(integration, d.payload)
      : {
          status: null,
          error: `integration ${d.integration_id} is no longer configured`,
          latency_ms: 0,
          response_excerpt: null,
        };
    if (closed) return; // the server is stopping: the attempt is not recorded, so it is sent again after the restart
    const delay = rules.retryScheduleMs[attempt - 1];
    // Past the schedule, or a 4xx where the profile does not retry one: the delivery fails for good.
    const retryAt =
      delay === undefined || (!rules.retryClientErrors && isClientError(result.status))
        ? null
        : deps.now() + delay * timeScale;
    outbox.record(d, result, deps.now(), retryAt);
    log({
      type: 'delivery',
      at: new Date(deps.now()).toISOString(),
      delivery_id: d.delivery_id,
      document_id: d.document_id,
      integration_id: d.integration_id,
      method: integration?.method ?? 'POST',
      url: loggableUrl(integration?.url ?? ''),
      attempt,
      status: result.status,
      error: result.error,
      ms: result.latency_ms,
    });
  };

  /** Webhook faults: a dropped attempt counts as failed; a duplicate is sent twice; a delay lets later events overtake. */
  const attemptWithFaults = async (integration: ResolvedIntegration, payload: string): Promise<AttemptResult> => {
    const effect = faults.draw('webhook');
    if (effect?.type === 'drop')
      return { status: null, error: 'injected fault: attempt dropped', latency_ms: 0, response_excerpt: null };
    if (effect?.type === 'delay') await deps.sleep(effect.ms);
    const result = await attemptDelivery(integration, payload, { timeoutMs, userAgent }, deps);
    if (effect?.type === 'duplicate') await attemptDelivery(integration, payload, { timeoutMs, userAgent }, deps);
    return result;
  };

  const tick = () => {
    timer = undefined;
    if (closed) return;
    for (const d of outbox.due(deps.now())) {
      if (inFlight.has(d.delivery_id)) continue;
      const p = send(d).finally(() => {
        inFlight.delete(d.delivery_id);
        schedule();
      });
      inFlight.set(d.delivery_id, p);
    }
    schedule();
  };

  const schedule = () => {
    if (closed) return;
    // Deliveries in flight are left out: counting one that hangs as due woke this loop at once,
    // again and again (a quarter of a core while a receiver hung). Their end calls schedule().
    const next = outbox.nextDueAt(new Set(inFlight.keys()));
    if (next === null) return;
    const wait = Math.max(0, Math.min(next - deps.now(), 60_000));
    if (timer) clearTimeout(timer);
    timer = setTimeout(tick, wait);
    timer.unref();
  };

  return {
    wake() {
      if (timer) clearTimeout(timer);
      timer = setTimeout(tick, 0);
      timer.unref();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}

const isClientError = (status: number | null) => status !== null && status >= 400 && status < 500;

function authorization(integration: WebhookIntegration): string | undefined {
  switch (integration.auth.type) {
    case 'none':
      return undefined;
    case 'bearer':
      return `Bearer ${integration.auth.token}`;
    case 'basic':
      return `Basic ${Buffer.from(`${integration.auth.username}:${integration.auth.password}`).toString('base64')}`;
  }
}

async function attemptDelivery(
  integration: WebhookIntegration,
  payload: string,
  { timeoutMs, userAgent }: { timeoutMs: number; userAgent: string },
  deps: EmulatorDeps,
): Promise<AttemptResult> {
  const started = deps.now();
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': userAgent };
  const auth = authorization(integration);
  if (auth) headers.authorization = auth;
  try {
    const res = await requestUrl(integration.url, {
      method: integration.method,
      headers,
      body: payload,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const excerpt = await readExcerpt(res.body, EXCERPT_BYTES);
    return { status: res.statusCode, error: null, latency_ms: deps.now() - started, response_excerpt: excerpt };
  } catch (err) {
    const code = (err as { code?: string }).code;
    const message = err instanceof Error ? err.message : String(err);
    return {
      status: null,
      error: code ? `${code}: ${message}` : message,
      latency_ms: deps.now() - started,
      response_excerpt: null,
    };
  }
}

/**
 * The first `limit` bytes of a receiver's answer; the rest is not read (the connection is
 * closed), so a receiver that answers 700 MB costs 256 bytes, not 700 MB of memory.
 */
async function readExcerpt(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break; // leaving the loop destroys the stream
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}
