import type { WebhookConfiguration } from './configuration-api.js';

/**
 * The emergency escape that sticks: with this annotation set to "true" on a configuration, the
 * reconciler (and a restarting leader) leaves it exactly as it is, a hand-set
 * `failurePolicy: Ignore` included, until the annotation is removed. Teardown still deletes it:
 * scaling the Deployment to zero removes everything.
 */
export const UNMANAGED_ANNOTATION = 'kube-admission-server.io/unmanaged';

export function isUnmanaged(configuration: WebhookConfiguration): boolean {
  return configuration.metadata?.annotations?.[UNMANAGED_ANNOTATION] === 'true';
}
