import type { WebhookConfiguration } from './configuration-api.js';

export interface ServiceRef {
  name: string;
  namespace: string;
}

/** Where the configurations send this process's reviews: its Service, or a URL base (the dev loop). */
export type RouteTarget = { service: ServiceRef } | { urlBase: string };

/** The path of `clientConfig` under `target`, or undefined when it routes elsewhere. */
function routedPath(clientConfig: { service?: { name?: string; namespace?: string; path?: string }; url?: string } | undefined, target: RouteTarget): string | undefined {
  if ('urlBase' in target) return clientConfig?.url?.startsWith(`${target.urlBase}/`) ? clientConfig.url.slice(target.urlBase.length) : undefined;
  const service = clientConfig?.service;
  return service?.name === target.service.name && service.namespace === target.service.namespace ? service.path : undefined;
}

/**
 * The paths of `target` that `configurations` route to: what kube-apiserver calls on this
 * install, whoever registered it (this process as the leader, another replica, or a hand edit).
 * A configuration that does not exist routes nothing.
 */
export function routedPathsOf(configurations: readonly (WebhookConfiguration | undefined)[], target: RouteTarget): Set<string> {
  const paths = new Set<string>();
  for (const configuration of configurations) {
    for (const webhook of configuration?.webhooks ?? []) {
      const path = routedPath(webhook.clientConfig, target);
      if (path) paths.add(path);
    }
  }
  return paths;
}

/** The webhook paths the live configurations route to, and word when that may have changed. */
export interface RoutedPaths {
  /** undefined: not read yet (every previous handler then counts as routed). */
  current(): ReadonlySet<string> | undefined;
  /** Calls `listener` after each new reading; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}
