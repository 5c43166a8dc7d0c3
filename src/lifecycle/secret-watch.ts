import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import type { GeneratedMaterialSource } from '../tls/generated-source.js';
import { generatedSecretName } from '../tls/secret-api.js';
import { PendingTrigger } from '../util/pending-trigger.js';

/** Without any event, one more check this often (harmless: the source checks every 10 minutes on its own). */
const IDLE_MS = 60 * 60 * 1000;

/**
 * Generate mode in a cluster: every replica watches the shared Secret and checks its material as
 * soon as it is written (created by a new replica after it was deleted, renewed by another
 * replica), instead of at the next 10-minute renewal check. So the leader registers a new shared
 * CA within moments, next to the old one (the CA overlap), and every replica moves to the new leaf
 * once the live caBundles trust it (ServingTrust). Events during a check coalesce.
 *
 * A deletion alone triggers nothing: deleting the Secret and restarting is how an operator starts
 * over with a new CA, and a running replica that recreated it at once with the CA it serves would
 * defeat that. Left alone, the next renewal check recreates it (an accidental deletion), or a new
 * replica creates it with a new CA, which this watch then brings to everyone.
 */
export async function followGeneratedSecret(config: Config, api: KubeApi, source: GeneratedMaterialSource, logger: Logger, signal: AbortSignal): Promise<void> {
  const { watchEvents } = await import('../kube/watch-events.js');
  const changed = new PendingTrigger(false);
  const name = generatedSecretName(config.serviceName);
  const watching = watchEvents({
    kubeConfig: api.kubeConfig,
    path: `/api/v1/namespaces/${config.namespace}/secrets`,
    name,
    what: `Secret ${config.namespace}/${name}`,
    onEvent: (phase) => {
      if (phase === 'ADDED' || phase === 'MODIFIED') changed.fire();
    },
    signal,
    logger,
  });
  while (!signal.aborted) {
    await changed.take(IDLE_MS, signal);
    if (signal.aborted) break;
    await source.refresh(signal).catch((error: unknown) => {
      if (!signal.aborted) logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'checking the certificate Secret after a change failed; keeping the current material');
    });
  }
  await watching;
}
