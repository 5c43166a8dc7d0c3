import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import type { WebhookConfiguration } from './configuration-api.js';
import { canonical } from '../util/canonical-json.js';
import { OWNER_API_VERSION, OWNER_KIND } from './desired-configurations.js';

/** JSON with sorted keys and no undefined/empty lists, so equal content compares equal. */
export { canonical };

/** The fields this server owns in each webhook; anything else (added by others) is left alone. */
export const OWNED_WEBHOOK_FIELDS = [
  'name',
  'admissionReviewVersions',
  'clientConfig',
  'rules',
  'failurePolicy',
  'matchPolicy',
  'sideEffects',
  'timeoutSeconds',
  'namespaceSelector',
  'objectSelector',
  'matchConditions',
  'reinvocationPolicy',
] as const;

function ownedWebhooks(configuration: WebhookConfiguration): unknown {
  return (configuration.webhooks ?? []).map((webhook) => {
    const record = webhook as unknown as Record<string, unknown>;
    return canonical(Object.fromEntries(OWNED_WEBHOOK_FIELDS.map((field) => [field, record[field]])));
  });
}

/**
 * ClusterRole ownerReferences are this server's to manage (--owner-cluster-role), whatever their
 * uid: one naming a replaced or deleted ClusterRole must go. Owners of other kinds are others'.
 */
export const isOwnRoleReference = (ref: V1OwnerReference): boolean => ref.kind === OWNER_KIND && ref.apiVersion.split('/')[0] === OWNER_API_VERSION.split('/')[0];

const ownReferencesKey = (refs: V1ObjectMeta['ownerReferences']): string =>
  JSON.stringify((refs ?? []).filter(isOwnRoleReference).map((r) => [r.name, r.uid]).sort());

export function metadataDiffers(desired: V1ObjectMeta | undefined, actual: V1ObjectMeta | undefined): boolean {
  const labelsMissing = Object.entries(desired?.labels ?? {}).some(([key, value]) => actual?.labels?.[key] !== value);
  const annotationsMissing = Object.entries(desired?.annotations ?? {}).some(([key, value]) => actual?.annotations?.[key] !== value);
  // No ownerReferences in desired: no owner configured, so the server leaves them alone.
  return labelsMissing || annotationsMissing || (desired?.ownerReferences !== undefined && ownReferencesKey(desired.ownerReferences) !== ownReferencesKey(actual?.ownerReferences));
}

/** True when `actual` lacks something of `desired`: then it must be updated. */
export function configurationDiffers(desired: WebhookConfiguration, actual: WebhookConfiguration): boolean {
  if (metadataDiffers(desired.metadata, actual.metadata)) return true;
  return JSON.stringify(ownedWebhooks(desired)) !== JSON.stringify(ownedWebhooks(actual));
}

/**
 * What to PUT: the desired content on top of the current object, keeping its resourceVersion
 * (optimistic concurrency), its other labels and annotations, and owner references of others.
 */
export function mergeForUpdate<T extends { metadata?: V1ObjectMeta }>(desired: T, actual: T): T {
  const { ownerReferences: actualOwners = [], ...actualMetadata } = actual.metadata ?? {};
  const ownOwners = desired.metadata?.ownerReferences;
  const owners = ownOwners === undefined ? actualOwners : [...actualOwners.filter((r) => !isOwnRoleReference(r)), ...ownOwners];
  return {
    ...desired,
    metadata: {
      ...actualMetadata,
      labels: { ...actual.metadata?.labels, ...desired.metadata?.labels },
      ...(desired.metadata?.annotations ? { annotations: { ...actual.metadata?.annotations, ...desired.metadata.annotations } } : {}),
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
    },
  } as T;
}
