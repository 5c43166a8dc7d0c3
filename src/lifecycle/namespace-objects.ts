import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { NamespaceCache } from '../kube/namespace-cache.js';
import type { NamespaceSource } from '../admission/namespace-object.js';
import type { WebhookRegistry } from '../webhooks/registry.js';
import { withTimeout } from '../util/abort.js';

/** How often a start still waiting for the first list of Namespaces logs it and checks for a refusal. */
export const NAMESPACE_SYNC_TIMEOUT_MS = 30_000;

export interface NamespaceObjects {
  /** What the webhook server reads context.namespaceObject from. */
  readonly source: NamespaceSource;
  /**
   * Resolves once the cache has synced (at once when no served webhook reads namespaceObject);
   * throws when the API refuses the list (checked every sync timeout), or when `signal` aborts.
   */
  ready(signal: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export interface NamespaceObjectsOptions {
  registry: WebhookRegistry;
  /** Undefined without a cluster: namespaceObject is then never known. */
  kubeConfig: KubeConfig | undefined;
  logger: Logger;
  /** The process lifetime. */
  signal: AbortSignal;
  syncTimeoutMs?: number;
}

function readers(registry: WebhookRegistry): string[] {
  return registry.list().filter((webhook) => webhook.readsNamespaceObject).map((webhook) => webhook.name);
}

/**
 * The Namespace cache, running exactly while some served webhook reads namespaceObject (decided
 * when a policy version is loaded: a cel rule whose expressions read it, or a custom webhook that
 * says so), so an install whose policy never reads it needs no right on namespaces.
 */
export async function namespaceObjects(options: NamespaceObjectsOptions): Promise<NamespaceObjects> {
  const { registry, kubeConfig, logger, signal } = options;
  // Only with a cluster: a local start does not load the Kubernetes client for nothing.
  const NamespaceCache = kubeConfig ? (await import('../kube/namespace-cache.js')).NamespaceCache : undefined;
  let cache: NamespaceCache | undefined;
  let warnedLocal = false;
  const follow = (): void => {
    const reading = readers(registry);
    if (reading.length > 0 && !cache && kubeConfig && NamespaceCache) {
      cache = new NamespaceCache({ kubeConfig, logger: logger.child({ component: 'namespace-cache' }) });
      cache.start(signal);
      logger.info({ webhooks: reading }, 'these webhooks read namespaceObject: listing and watching namespaces');
    } else if (reading.length > 0 && !kubeConfig && !warnedLocal) {
      warnedLocal = true;
      logger.warn({ webhooks: reading }, 'these webhooks read namespaceObject but no cluster is configured: they answer namespaced requests by failurePolicy');
    } else if (reading.length === 0 && cache) {
      void cache.stop();
      cache = undefined;
      logger.info('no webhook reads namespaceObject any more: namespace cache stopped');
    }
  };
  follow();
  registry.on('change', follow);
  return {
    source: { get: (name) => cache?.get(name) },
    async ready(wait) {
      const current = cache;
      if (!current || current.synced) return;
      const timeoutMs = options.syncTimeoutMs ?? NAMESPACE_SYNC_TIMEOUT_MS;
      // An outage or throttling is waited out (up, not Ready, the cache retrying); a refusal is an
      // install mistake that no wait mends: the start fails, naming the rights.
      for (;;) {
        try {
          await withTimeout(timeoutMs, wait, (bounded) => current.waitForSync(bounded));
          return;
        } catch (error) {
          if (wait.aborted) throw error;
          if (current.refused) {
            throw new Error(
              `the namespace cache did not sync within ${timeoutMs / 1000} s (${current.lastError ?? 'refused'}); webhooks ${readers(registry).join(', ')} read namespaceObject, ` +
                'so the ServiceAccount needs list and watch on namespaces (the Helm chart grants them when the policy reads namespaceObject; kustomize: add the component manifests/components/namespace-object)',
            );
          }
          logger.warn({ waitedMs: timeoutMs, error: current.lastError ?? 'no answer' }, 'the namespace cache has not synced yet; not Ready until it has');
        }
      }
    },
    async stop() {
      registry.off('change', follow);
      await cache?.stop();
    },
  };
}
