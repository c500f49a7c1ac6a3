import type { DatabaseSync } from 'node:sqlite';
import type { EmulatorConfig, ParserConfig } from '../../contract/index.ts';
import type { EmulatorDeps } from '../clock.ts';
import type { Faults } from '../faults.ts';
import type { DocumentRow } from '../documents.ts';
import { GatewayError } from '../errors.ts';
import type { Profile } from '../profile.ts';
import { createDispatcher, type DeliveryLog, type ResolvedIntegration } from './dispatcher.ts';
import { Outbox } from './outbox.ts';
import { processedPayload, testPayload } from './payload.ts';

/**
 * Outbound webhooks (spec, "Events"): one document.processed event per integration of
 * the document's parser, for every completed document whatever its route. Documents
 * that end in error fire nothing (the emulator's choice; the README says so).
 */
export type Webhooks = ReturnType<typeof createWebhooks>;

/** Integrations get an id from the config, or `<parser_id>-webhook-<n>`. */
function resolveIntegrations(parsers: readonly ParserConfig[]): Map<string, ResolvedIntegration> {
  const out = new Map<string, ResolvedIntegration>();
  for (const p of parsers) {
    p.webhooks.forEach((w, i) => {
      const id = w.id ?? `${p.parser_id}-webhook-${i + 1}`;
      out.set(id, { ...w, id, parser_id: p.parser_id });
    });
  }
  return out;
}

export function createWebhooks(input: {
  db: DatabaseSync;
  config: EmulatorConfig;
  profile: Profile;
  deps: EmulatorDeps;
  faults: Faults;
  log: DeliveryLog;
}) {
  const { db, config, profile, deps, faults, log } = input;
  const outbox = new Outbox(db);
  const integrations = resolveIntegrations(config.parsers);
  const parsers = new Map(config.parsers.map((p) => [p.parser_id, p]));
  const dispatcher = createDispatcher({
    outbox,
    integrations,
    rules: profile.webhooks,
    timeScale: config.webhook_delivery.time_scale,
    deps,
    faults,
    log,
  });

  return {
    outbox,
    integrations,
    /** Stores the events of a completed document; call inside the transaction that completes it. */
    enqueue(doc: DocumentRow) {
      if (doc.status !== 'completed') return;
      const parser = parsers.get(doc.parser_id);
      if (!parser) return;
      const payload = processedPayload(parser, doc, profile.missing);
      const eventId = deps.newId('evt');
      for (const integration of integrations.values()) {
        if (integration.parser_id !== parser.parser_id) continue;
        outbox.add(
          { delivery_id: deps.newId('dlv'), event_id: eventId, integration_id: integration.id, payload },
          deps.now(),
        );
      }
    },
    /** Wakes the dispatcher after a commit that stored deliveries. */
    flush() {
      dispatcher.wake();
    },
    /** The integration's test action: a sample payload of its parser's shape (marked as a test where the profile does). */
    test(integrationId: string) {
      const integration = integrations.get(integrationId);
      if (!integration)
        throw new GatewayError(
          'not_found',
          `no webhook integration ${JSON.stringify(integrationId)}: GET /_emulator/integrations lists them`,
        );
      const parser = parsers.get(integration.parser_id)!;
      const deliveryId = deps.newId('dlv');
      outbox.add(
        {
          delivery_id: deliveryId,
          event_id: deps.newId('evt'),
          integration_id: integration.id,
          payload: testPayload(
            parser,
            profile.webhooks.testDocumentId(deps.now(), deps.newId),
            deps.now(),
            profile.webhooks.testMarked,
          ),
          test: true,
        },
        deps.now(),
      );
      dispatcher.wake();
      return outbox.get(deliveryId)!;
    },
    resend(deliveryId: string) {
      if (!outbox.resend(deliveryId, deps.now()))
        throw new GatewayError(
          'not_found',
          `no delivery ${JSON.stringify(deliveryId)}: GET /_emulator/deliveries lists them`,
        );
      dispatcher.wake();
      return outbox.get(deliveryId)!;
    },
    recover(sinceMs: number) {
      const requeued = outbox.recover(sinceMs, deps.now());
      dispatcher.wake();
      return requeued;
    },
    start() {
      dispatcher.wake();
    },
    close: () => dispatcher.close(),
  };
}
