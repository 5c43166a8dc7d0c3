import type { WebhookConfiguration } from './configuration-api.js';

export interface ServiceRef {
  name: string;
  namespace: string;
}

/**
 * The paths of `service` that `configurations` route to: what kube-apiserver calls on this
 * install, whoever registered it (this process as the leader, another replica, or a hand edit).
 * A configuration that does not exist routes nothing.
 */
export function routedPathsOf(configurations: readonly (WebhookConfiguration | undefined)[], service: ServiceRef): Set<string> {
  const paths = new Set<string>();
  for (const configuration of configurations) {
    for (const webhook of configuration?.webhooks ?? []) {
      const target = webhook.clientConfig?.service;
      if (target?.name === service.name && target.namespace === service.namespace && target.path) paths.add(target.path);
    }
  }
  return paths;
}
