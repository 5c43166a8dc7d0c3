import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { WebhookConfiguration } from './configuration-api.js';

/** The fields this server owns in each webhook; anything else (added by others) is left alone. */
const OWNED_WEBHOOK_FIELDS = [
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

/** JSON with sorted keys and no undefined/empty lists, so equal content compares equal. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, canonical(v)]);
    return Object.fromEntries(entries);
  }
  return value;
}

function ownedWebhooks(configuration: WebhookConfiguration): unknown {
  return (configuration.webhooks ?? []).map((webhook) => {
    const record = webhook as unknown as Record<string, unknown>;
    return canonical(Object.fromEntries(OWNED_WEBHOOK_FIELDS.map((field) => [field, record[field]])));
  });
}

function metadataDiffers(desired: V1ObjectMeta | undefined, actual: V1ObjectMeta | undefined): boolean {
  const labelsMissing = Object.entries(desired?.labels ?? {}).some(([key, value]) => actual?.labels?.[key] !== value);
  const annotationsMissing = Object.entries(desired?.annotations ?? {}).some(([key, value]) => actual?.annotations?.[key] !== value);
  const ownerKey = (refs: V1ObjectMeta['ownerReferences']) =>
    JSON.stringify((refs ?? []).map((r) => [r.apiVersion, r.kind, r.name, r.uid]).sort());
  return labelsMissing || annotationsMissing || (desired?.ownerReferences !== undefined && ownerKey(desired.ownerReferences) !== ownerKey(actual?.ownerReferences));
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
export function mergeForUpdate(desired: WebhookConfiguration, actual: WebhookConfiguration): WebhookConfiguration {
  const ownerUids = new Set((desired.metadata?.ownerReferences ?? []).map((r) => r.uid));
  const keptOwners = (actual.metadata?.ownerReferences ?? []).filter((r) => !ownerUids.has(r.uid));
  const owners = [...keptOwners, ...(desired.metadata?.ownerReferences ?? [])];
  return {
    ...desired,
    metadata: {
      ...actual.metadata,
      labels: { ...actual.metadata?.labels, ...desired.metadata?.labels },
      ...(desired.metadata?.annotations ? { annotations: { ...actual.metadata?.annotations, ...desired.metadata.annotations } } : {}),
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
    },
  } as WebhookConfiguration;
}
