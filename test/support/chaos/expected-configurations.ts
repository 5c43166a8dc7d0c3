/**
 * The webhooks both configurations must hold, computed from the policy file and the defaults
 * docs/policy.md documents, without src/: the chaos invariants compare the stored configurations
 * with this, never with what a leader happened to register first. When docs/policy.md changes a
 * default (a rule kind's default rules, a field's default), this file follows it.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

type Kind = 'mutating' | 'validating';

interface Rule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
}

interface PolicyEntry {
  name: string;
  kind: string;
  mode?: string;
  failurePolicy?: string;
  timeoutSeconds?: number;
  sideEffects?: string;
  matchPolicy?: string;
  reinvocationPolicy?: string;
  rules?: Rule[];
}

/** A webhook reduced to what the policy and the defaults decide (caBundle aside: invariants.ts checks it). */
export interface WebhookFacts {
  name: string;
  service: { name: string; namespace: string; path: string; port: number };
  failurePolicy: string;
  timeoutSeconds: number;
  sideEffects: string;
  matchPolicy: string;
  admissionReviewVersions: string[];
  reinvocationPolicy: string | undefined;
  /** Namespaces the namespaceSelector keeps out, sorted. */
  excludedNamespaces: string[];
  /** Every `OPERATION group/version/resource` the rules match, sorted. */
  matches: string[];
}

export type ExpectedWebhooks = Record<Kind, WebhookFacts[]>;

const WORKLOADS: Rule[] = [
  { operations: [], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'replicationcontrollers', 'podtemplates'] },
  { operations: [], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'statefulsets', 'daemonsets', 'replicasets'] },
  { operations: [], apiGroups: ['batch'], apiVersions: ['v1'], resources: ['jobs', 'cronjobs'] },
];
const withOperations = (rules: Rule[], operations: string[]): Rule[] => rules.map((rule) => ({ ...rule, operations }));
const DEBUG_CONTAINERS: Rule[] = [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'] }];
const PODS_CREATE: Rule[] = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];

/** docs/policy.md, "Built-in rules": each kind's configuration and default rules. */
const KINDS: Record<string, { type: Kind; rules: Rule[] }> = {
  requireLabels: { type: 'validating', rules: withOperations(WORKLOADS, ['CREATE', 'UPDATE']) },
  denyPrivileged: { type: 'validating', rules: [...withOperations(WORKLOADS, ['CREATE', 'UPDATE']), ...DEBUG_CONTAINERS] },
  denyHostNamespaces: { type: 'validating', rules: withOperations(WORKLOADS, ['CREATE', 'UPDATE']) },
  allowedRegistries: { type: 'validating', rules: [...withOperations(WORKLOADS, ['CREATE', 'UPDATE']), ...DEBUG_CONTAINERS] },
  defaultLabels: { type: 'mutating', rules: PODS_CREATE },
  defaultResources: { type: 'mutating', rules: withOperations(WORKLOADS, ['CREATE']) },
};

/** docs/policy.md, "Entry fields": Fail only for an enforcing validating rule; mode defaults to enforce. */
function defaultFailurePolicy(type: Kind, mode: string): string {
  return type === 'validating' && mode === 'enforce' ? 'Fail' : 'Ignore';
}

function matches(rules: readonly Rule[]): string[] {
  const all = rules.flatMap((rule) =>
    rule.operations.flatMap((op) => rule.apiGroups.flatMap((group) => rule.apiVersions.flatMap((version) => rule.resources.map((resource) => `${op} ${group}/${version}/${resource}`)))),
  );
  return [...new Set(all)].sort();
}

/** docs/policy.md, "Grouped registration": the timeout classes (up to 5, 10 and 30 s). */
const timeoutClass = (seconds: number): number => (seconds <= 5 ? 5 : seconds <= 10 ? 10 : 30);

/** docs/policy.md, "Grouped registration": the group's name from what its members share. */
function groupName(kind: Kind, facts: WebhookFacts): string {
  const parts = [kind, facts.failurePolicy.toLowerCase(), `t${timeoutClass(facts.timeoutSeconds)}`];
  if (facts.sideEffects === 'NoneOnDryRun') parts.push('dryrun');
  if (facts.matchPolicy === 'Exact') parts.push('exact');
  if (facts.reinvocationPolicy === 'IfNeeded') parts.push('reinvoke');
  return parts.join('-');
}

/** The members' names as the path's segments: joined with dots, cut at 253 characters (a DNS subdomain). */
function membersPath(names: readonly string[]): string {
  const segments: string[] = [];
  for (const name of names) {
    const last = segments.at(-1);
    if (last !== undefined && last.length + 1 + name.length <= 253) segments[segments.length - 1] = `${last}.${name}`;
    else segments.push(name);
  }
  return segments.join('/');
}

/**
 * docs/policy.md, "Grouped registration": entries of one type with the same failurePolicy,
 * sideEffects, timeout class, matchPolicy and reinvocationPolicy are one webhook, in the order of
 * its first entry: the union of the rules, the slowest timeout, the path naming the entries.
 */
function grouped(kind: Kind, entries: readonly { entry: string; facts: WebhookFacts }[], install: { serviceName: string; namespace: string }): WebhookFacts[] {
  const groups = new Map<string, { entry: string; facts: WebhookFacts }[]>();
  for (const member of entries) {
    const name = groupName(kind, member.facts);
    groups.set(name, [...(groups.get(name) ?? []), member]);
  }
  return [...groups].map(([name, members]) => {
    const first = members[0]!.facts;
    return {
      ...first,
      name: `${name}.${install.serviceName}.${install.namespace}.svc`,
      service: { ...first.service, path: `/${kind === 'mutating' ? 'mutate' : 'validate'}/${name}/${membersPath(members.map((m) => m.entry))}` },
      timeoutSeconds: Math.max(...members.map((m) => m.facts.timeoutSeconds)),
      matches: [...new Set(members.flatMap((m) => m.facts.matches))].sort(),
    };
  });
}

/** From the policy file: one webhook per entry or per group, with docs/policy.md's defaults where it is silent. */
export function expectedWebhooks(policyFile: string, install: { serviceName: string; namespace: string }): ExpectedWebhooks {
  return expectedWebhooksOf(readFileSync(policyFile, 'utf8'), install);
}

/** The same from a policy file's text. */
export function expectedWebhooksOf(policyText: string, install: { serviceName: string; namespace: string }): ExpectedWebhooks {
  const policy = parse(policyText) as { excludedNamespaces?: string[]; grouping?: string; webhooks: (PolicyEntry & Record<string, unknown>)[] };
  // The own namespace is always excluded; the list's default is [kube-system].
  const excluded = [...new Set([install.namespace, ...(policy.excludedNamespaces ?? ['kube-system'])])].sort();
  const entries: Record<Kind, { entry: string; facts: WebhookFacts }[]> = { mutating: [], validating: [] };
  for (const entry of policy.webhooks) {
    const kind = KINDS[entry.kind];
    if (!kind) throw new Error(`expected-configurations.ts does not know the rule kind ${entry.kind}: add it from docs/policy.md`);
    const selectors = ['namespaceSelector', 'objectSelector', 'matchConditions'].filter((field) => entry[field] !== undefined);
    if (selectors.length > 0) throw new Error(`expected-configurations.ts does not model ${selectors.join(', ')} (entry ${entry.name}): add it from docs/policy.md`);
    entries[kind.type].push({ entry: entry.name, facts: {
      name: `${entry.name}.${install.serviceName}.${install.namespace}.svc`,
      service: { name: install.serviceName, namespace: install.namespace, path: `/${kind.type === 'mutating' ? 'mutate' : 'validate'}/${entry.name}`, port: 443 },
      failurePolicy: entry.failurePolicy ?? defaultFailurePolicy(kind.type, entry.mode ?? 'enforce'),
      timeoutSeconds: entry.timeoutSeconds ?? 5,
      sideEffects: entry.sideEffects ?? 'None',
      matchPolicy: entry.matchPolicy ?? 'Equivalent',
      admissionReviewVersions: ['v1'],
      reinvocationPolicy: kind.type === 'mutating' ? (entry.reinvocationPolicy ?? 'Never') : undefined,
      excludedNamespaces: excluded,
      matches: matches(entry.rules ?? kind.rules),
    } });
  }
  if (policy.grouping === 'none') return { mutating: entries.mutating.map((e) => e.facts), validating: entries.validating.map((e) => e.facts) };
  return { mutating: grouped('mutating', entries.mutating, install), validating: grouped('validating', entries.validating, install) };
}

export interface StoredWebhook {
  name?: string;
  clientConfig?: { service?: { name?: string; namespace?: string; path?: string; port?: number } };
  failurePolicy?: string;
  timeoutSeconds?: number;
  sideEffects?: string;
  matchPolicy?: string;
  admissionReviewVersions?: string[];
  reinvocationPolicy?: string;
  namespaceSelector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  rules?: Rule[];
}

/** The same facts read from a stored webhook. */
export function webhookFacts(webhook: StoredWebhook, kind: Kind): WebhookFacts {
  const notIn = webhook.namespaceSelector?.matchExpressions?.filter((e) => e.key === 'kubernetes.io/metadata.name' && e.operator === 'NotIn') ?? [];
  const service = webhook.clientConfig?.service ?? {};
  return {
    name: webhook.name ?? '',
    service: { name: service.name ?? '', namespace: service.namespace ?? '', path: service.path ?? '', port: service.port ?? 443 },
    failurePolicy: webhook.failurePolicy ?? '',
    timeoutSeconds: webhook.timeoutSeconds ?? 0,
    sideEffects: webhook.sideEffects ?? '',
    matchPolicy: webhook.matchPolicy ?? '',
    admissionReviewVersions: webhook.admissionReviewVersions ?? [],
    reinvocationPolicy: kind === 'mutating' ? webhook.reinvocationPolicy : undefined,
    excludedNamespaces: [...new Set(notIn.flatMap((e) => e.values ?? []))].sort(),
    matches: matches(webhook.rules ?? []),
  };
}
