import type { ConfigurationKind, WebhookConfiguration } from './configuration-api.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './desired-configurations.js';
import type { RouteTarget } from './routed-paths.js';

type ClientConfig = { service?: { name?: string; namespace?: string }; url?: string } | undefined;

function hostOf(url: string | undefined): string | undefined {
  try {
    return url === undefined ? undefined : new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** Where one webhook's calls go, when that is not this install; undefined when it is. */
function callsElsewhere(clientConfig: ClientConfig, target: RouteTarget): string | undefined {
  const service = clientConfig?.service;
  if ('urlBase' in target) {
    // The dev loop's port may change between runs; the host it is reachable at says whose it is.
    return clientConfig?.url !== undefined && hostOf(clientConfig.url) === hostOf(target.urlBase) ? undefined : `calls ${clientConfig?.url ?? `service ${service?.namespace}/${service?.name}`}`;
  }
  if (service?.name === target.service.name && service.namespace === target.service.namespace) return undefined;
  return `calls ${service ? `service ${service.namespace}/${service.name}` : (clientConfig?.url ?? 'nothing')}`;
}

/**
 * Why a live configuration of this install's name is another's, or undefined when it is this
 * install's: each of its webhooks calls this install (its Service, namespace and name; in the dev
 * loop the host it is reachable at), or it has no webhook and carries this server's managed-by
 * label (it calls no one). Another's is never written over nor deleted: another install of the
 * server (another Service or namespace), another tool, a hand-made object.
 */
export function heldElsewhere(configuration: WebhookConfiguration, target: RouteTarget): string | undefined {
  const webhooks = configuration.webhooks ?? [];
  if (webhooks.length === 0) {
    return configuration.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE ? undefined : `it has no webhook and no ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} label`;
  }
  for (const webhook of webhooks) {
    const elsewhere = callsElsewhere(webhook.clientConfig as ClientConfig, target);
    if (elsewhere) return `its webhook ${webhook.name} ${elsewhere}`;
  }
  return undefined;
}

/** A configuration of this install's name that another holds: nothing of this install is written into it. */
export class ConfigurationHeldElsewhere extends Error {
  override readonly name = 'ConfigurationHeldElsewhere';
  constructor(
    readonly kind: ConfigurationKind,
    readonly configuration: string,
    readonly why: string,
  ) {
    super(
      `the ${kind} webhook configuration ${configuration} is not this install's (${why}); it is left as it is: give this install a name of its own (--config-name), or delete that configuration if what it calls is gone`,
    );
  }
}
