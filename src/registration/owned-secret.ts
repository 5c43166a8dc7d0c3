import type { V1OwnerReference } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { formatApiFailure, isConflict, isForbidden, isNotFound } from '../kube/api-errors.js';
import type { KubeApi } from '../kube/client.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from './desired-configurations.js';
import { namesEvery, withOwners } from './install-owners.js';
import { callApi } from '../kube/request-deadline.js';

export interface OwnedSecret {
  api: KubeApi;
  namespace: string;
  name: string;
  logger: Logger;
}

/**
 * Gives the generated Secret (it holds the CA key) the install's owners, so that deleting the
 * install garbage-collects it instead of leaving a CA key behind. Only a Secret this server
 * manages (its managed-by label): whichever replica starts first creates it, before anyone knows
 * the owners, so the leader adds them afterwards, at every reconcile pass after reading them. One
 * GET, and a PUT with its resourceVersion when a reference is missing or names another uid. Never
 * throws but on abort: a failure waits for the next pass (a conflict means the certificate code
 * wrote at the same moment, and it keeps the references).
 */
export async function ensureSecretOwners(secret: OwnedSecret, owners: readonly V1OwnerReference[], signal: AbortSignal): Promise<'owned' | 'updated' | 'skipped'> {
  if (owners.length === 0) return 'skipped';
  const { api, namespace, name, logger } = secret;
  try {
    const current = await callApi(signal, (o) => api.core.readNamespacedSecret({ name, namespace }, o));
    if (current.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE) return 'skipped';
    if (namesEvery(current.metadata?.ownerReferences, owners)) return 'owned';
    current.metadata = { ...current.metadata, ownerReferences: withOwners(current.metadata?.ownerReferences, owners) };
    await callApi(signal, (o) => api.core.replaceNamespacedSecret({ name, namespace, body: current }, o));
    logger.info({ secret: name, owners: owners.map((r) => `${r.kind}/${r.name}`) }, 'the generated Secret is owned by the install: uninstalling deletes it');
    return 'updated';
  } catch (error) {
    if (signal.aborted) throw error;
    // A 403 is an uninstall removing the Role (or a Role narrowed by hand: then it says so at every pass).
    const level = isNotFound(error) || isConflict(error) ? 'debug' : isForbidden(error) ? 'info' : 'warn';
    logger[level]({ secret: name, error: formatApiFailure(error) }, 'setting the owners of the generated Secret failed; trying again at the next pass');
    return 'skipped';
  }
}
