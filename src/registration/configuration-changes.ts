import type { WebhookConfiguration } from './configuration-api.js';
import { canonical, isOwnRoleReference, OWNED_WEBHOOK_FIELDS } from './configuration-diff.js';

/** Values longer than this (a caBundle, a long rule list) are reported as changed, not printed. */
const MAX_VALUE_CHARS = 80;

type Fields = Record<string, unknown>;

function shown(value: unknown): string {
  if (value === undefined) return 'unset';
  const text = JSON.stringify(canonical(value));
  return text.length <= MAX_VALUE_CHARS ? text : `${text.slice(0, MAX_VALUE_CHARS - 1)}…`;
}

function change(path: string, from: unknown, to: unknown): string | undefined {
  if (JSON.stringify(canonical(from)) === JSON.stringify(canonical(to))) return undefined;
  return `${path}: ${shown(from)} -> ${shown(to)}`;
}

/** clientConfig field by field: a caBundle swap and a service edit read differently. */
function clientConfigChanges(path: string, actual: Fields | undefined, desired: Fields | undefined): string[] {
  const keys = [...new Set([...Object.keys(actual ?? {}), ...Object.keys(desired ?? {})])].sort();
  return keys.flatMap((key) => change(`${path}.clientConfig.${key}`, actual?.[key], desired?.[key]) ?? []);
}

function webhookChanges(name: string, actual: Fields, desired: Fields): string[] {
  const path = `webhooks[${name}]`;
  return OWNED_WEBHOOK_FIELDS.filter((f) => f !== 'name').flatMap((field) =>
    field === 'clientConfig'
      ? clientConfigChanges(path, actual[field] as Fields | undefined, desired[field] as Fields | undefined)
      : (change(`${path}.${field}`, actual[field], desired[field]) ?? []),
  );
}

function metadataChanges(actual: WebhookConfiguration, desired: WebhookConfiguration): string[] {
  const changes: string[] = [];
  for (const part of ['labels', 'annotations'] as const) {
    for (const [key, value] of Object.entries(desired.metadata?.[part] ?? {})) {
      const line = change(`metadata.${part}[${key}]`, actual.metadata?.[part]?.[key], value);
      if (line) changes.push(line);
    }
  }
  if (desired.metadata?.ownerReferences !== undefined) {
    const own = (c: WebhookConfiguration) => (c.metadata?.ownerReferences ?? []).filter(isOwnRoleReference).map((r) => `${r.name}/${r.uid}`).sort();
    const line = change('metadata.ownerReferences(ClusterRole)', own(actual), own(desired));
    if (line) changes.push(line);
  }
  return changes;
}

/**
 * What an update of `actual` to `desired` changes, one readable line per field, for the log line
 * of a restore: which webhook lost what (`webhooks[deny-privileged…].failurePolicy: "Ignore" ->
 * "Fail"`). Undefined `actual`: the configuration was absent.
 */
export function describeChanges(desired: WebhookConfiguration, actual: WebhookConfiguration | undefined): string[] {
  if (actual === undefined) return ['the configuration was absent; created'];
  const byName = (c: WebhookConfiguration) => new Map((c.webhooks ?? []).map((w) => [w.name, w as unknown as Fields]));
  const actualHooks = byName(actual);
  const desiredHooks = byName(desired);
  const changes = metadataChanges(actual, desired);
  for (const [name, hook] of desiredHooks) {
    const current = actualHooks.get(name);
    changes.push(...(current ? webhookChanges(name, current, hook) : [`webhooks[${name}]: absent -> added`]));
  }
  for (const name of actualHooks.keys()) if (!desiredHooks.has(name)) changes.push(`webhooks[${name}]: removed`);
  const desiredOrder = [...desiredHooks.keys()].join(',');
  if (changes.length === 0 && [...actualHooks.keys()].join(',') !== desiredOrder) changes.push('webhooks: reordered');
  return changes;
}
