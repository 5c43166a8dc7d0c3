import type { Engine, PolicyEntry } from './policy.js';

export const ENGINES: readonly Engine[] = ['webhook', 'native', 'auto'];

/** Nothing changes for a policy that does not ask: every entry runs in the webhook. */
export const DEFAULT_ENGINE: Engine = 'webhook';

/**
 * Entry fields only a webhook has a use for: set on an entry, they say something a
 * ValidatingAdmissionPolicy would silently drop.
 */
export const WEBHOOK_ONLY_FIELDS = ['timeoutSeconds'] as const;

/** What the cluster offers native entries (read by the leader at its term start, or by render). */
export interface NativeSupport {
  /** admissionregistration.k8s.io/v1 validatingadmissionpolicies (and bindings) are served. */
  validatingPolicies: boolean;
  /** Why not, for the log and render (the version, or the API missing from discovery). */
  why?: string;
  /** admissionregistration.k8s.io/v1beta1 mutatingadmissionpolicies (and bindings) are served (absent: not). */
  mutatingPolicies?: boolean;
  /** Why not, likewise. */
  mutatingWhy?: string;
}

/** Why an entry cannot run inside kube-apiserver whatever the cluster (empty: it can). */
export function entryObstacles(entry: Pick<PolicyEntry, 'kind' | 'native' | 'nativeMutation' | 'spec'> & { mode?: PolicyEntry['mode']; webhookOnlyFields?: readonly string[] }): string[] {
  const obstacles = nativeObstacles(entry);
  if (entry.nativeMutation) {
    if (entry.spec.rules.every((rule) => rule.operations.every((op) => op === 'DELETE'))) obstacles.push('its rules match only DELETE, which a MutatingAdmissionPolicy cannot match');
  }
  for (const field of entry.webhookOnlyFields ?? []) {
    obstacles.push(`${field} is a webhook's setting: kube-apiserver runs a native policy without a call, so it would be dropped`);
  }
  return obstacles;
}

/** How one entry runs on a cluster: natively, in the webhook (with why, for `auto`), or not at all (`native` where the API is missing). */
export type EngineDecision = { engine: 'native' } | { engine: 'webhook'; fellBackBecause?: string } | { engine: 'refused'; why: string };

export function decideEngine(entry: PolicyEntry, support: NativeSupport): EngineDecision {
  const engine = entry.engine ?? DEFAULT_ENGINE;
  if (engine === 'webhook') return { engine: 'webhook' };
  const obstacles = entryObstacles(entry);
  // The loader refuses `native` with obstacles; a hand-made entry still gets a clear answer.
  if (obstacles.length > 0) return engine === 'auto' ? { engine: 'webhook', fellBackBecause: obstacles.join('; ') } : { engine: 'refused', why: obstacles.join('; ') };
  if (entry.nativeMutation ? support.mutatingPolicies === true : support.validatingPolicies) return { engine: 'native' };
  const why = entry.nativeMutation
    ? `the cluster does not serve admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy${support.mutatingWhy ? ` (${support.mutatingWhy})` : ''}`
    : `the cluster does not serve admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy${support.why ? ` (${support.why})` : ''}`;
  return engine === 'auto' ? { engine: 'webhook', fellBackBecause: why } : { engine: 'refused', why };
}

/** The entries of a policy as a cluster runs them. */
export interface EngineDecisions {
  native: PolicyEntry[];
  /** `auto` entries the webhook runs, and why. */
  fellBack: Array<{ entry: string; why: string }>;
  /** `native` entries the cluster cannot run: nothing runs them. */
  refused: Array<{ entry: string; why: string }>;
}

export function decideEngines(entries: readonly PolicyEntry[], support: NativeSupport): EngineDecisions {
  const decisions: EngineDecisions = { native: [], fellBack: [], refused: [] };
  for (const entry of entries) {
    const decision = decideEngine(entry, support);
    if (decision.engine === 'native') decisions.native.push(entry);
    else if (decision.engine === 'refused') decisions.refused.push({ entry: entry.spec.name, why: decision.why });
    else if (decision.fellBackBecause) decisions.fellBack.push({ entry: entry.spec.name, why: decision.fellBackBecause });
  }
  return decisions;
}

/**
 * The webhooks this server serves for a policy: every entry but those with `engine: native`
 * (validating and mutating alike),
 * which kube-apiserver alone runs (a cluster without the API fails the start instead). `auto`
 * entries stay served whatever the leader decides, so a fallback never finds a replica without
 * the handler.
 */
export function servedPolicyWebhooks<W extends { name: string; type: string }>(policy: { entries: readonly PolicyEntry[] }, webhooks: readonly W[]): W[] {
  const nativeOnly = new Set(policy.entries.filter((entry) => entry.engine === 'native').map((entry) => entry.spec.name));
  return webhooks.filter((webhook) => !nativeOnly.has(webhook.name));
}

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The params as a ConfigMap's string data, or undefined when they are shaped otherwise. */
export function configMapData(params: unknown): Record<string, string> | undefined {
  if (!isRecord(params) || !isRecord(params.data)) return undefined;
  const { data, apiVersion, kind, metadata, ...rest } = params;
  if (Object.keys(rest).length > 0 || (kind !== undefined && kind !== 'ConfigMap') || (apiVersion !== undefined && apiVersion !== 'v1') || (metadata !== undefined && !isRecord(metadata))) return undefined;
  return Object.values(data).every((v) => typeof v === 'string') ? (data as Record<string, string>) : undefined;
}

/**
 * Why an entry cannot run inside kube-apiserver as a ValidatingAdmissionPolicy or
 * MutatingAdmissionPolicy (empty: it can). cel rules have a validating native form, whose params
 * must be a ConfigMap's string data, since the binding's paramRef names a ConfigMap;
 * defaultLabels and defaultResources have a mutating one in mode enforce.
 */
export function nativeObstacles(entry: Pick<PolicyEntry, 'kind' | 'native' | 'nativeMutation'> & { mode?: PolicyEntry['mode'] }): string[] {
  if (entry.nativeMutation) {
    // warn and audit report what the rule would change without changing it: a policy can only change.
    return entry.mode === undefined || entry.mode === 'enforce' ? [] : [`mode ${entry.mode} reports what the rule would change without changing it: only the webhook can`];
  }
  if (!entry.native) return [`kind ${entry.kind} is built into this server: only its webhook runs it`];
  if (entry.native.params !== undefined && configMapData(entry.native.params) === undefined) {
    return ['params are not a ConfigMap\'s string data ({ data: { key: "value" } }): a native policy reads its params from a ConfigMap'];
  }
  return [];
}
