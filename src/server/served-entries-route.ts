import type { FastifyInstance } from 'fastify';
import type { WebhookRegistry } from '../webhooks/registry.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Where a replica says which entries it answers: the leader asks every ready replica before it registers a new one. */
export const SERVED_ENTRIES_PATH = '/served-entries';

/** The body of GET /served-entries: the entry names this replica answers now, per type, sorted. */
export interface ServedEntries {
  validating: string[];
  mutating: string[];
}

export function servedEntries(registry: Pick<WebhookRegistry, 'list'>): ServedEntries {
  const names = (type: 'validating' | 'mutating') =>
    registry
      .list()
      .filter((webhook) => webhook.type === type)
      .map((webhook) => webhook.name)
      .sort();
  return { validating: names('validating'), mutating: names('mutating') };
}

/**
 * GET /served-entries on the webhook port: the names of the rules this replica serves (the
 * current policy and the handlers it still serves while they retire). Rule names only, no rule
 * content; the webhook port is the one every replica and kube-apiserver can reach (the shipped
 * NetworkPolicy opens it), where the health port is not.
 */
export function addServedEntriesRoute(app: FastifyInstance, registry: Pick<WebhookRegistry, 'list'>): void {
  app.get(SERVED_ENTRIES_PATH, async (_request, reply) => reply.headers(SECURITY_HEADERS).type('application/json; charset=utf-8').send(servedEntries(registry)));
}
