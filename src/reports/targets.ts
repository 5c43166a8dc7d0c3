import type { DiscoveredResource } from '../kube/discovery.js';
import type { AdmissionRequest, Webhook } from '../admission/types.js';
import { ruleMatches } from '../webhooks/webhook-match.js';

/** kube-apiserver never sends admission configuration itself to webhooks. */
const NEVER_SENT_GROUP = 'admissionregistration.k8s.io';

function matchedOnCreate(resource: DiscoveredResource, webhooks: readonly Webhook[]): boolean {
  const probe = {
    operation: 'CREATE',
    namespace: resource.namespaced ? 'audit' : '',
    kind: { group: resource.group, version: resource.version, kind: resource.kind },
    resource: { group: resource.group, version: resource.version, resource: resource.resource },
  } as AdmissionRequest;
  return webhooks.some((webhook) => webhook.rules.some((rule) => ruleMatches(rule, probe)));
}

/** Whether any webhook's rules name `group` (so its discovery is worth reading). */
export function groupWanted(webhooks: readonly Webhook[]): (group: string) => boolean {
  return (group) => group !== NEVER_SENT_GROUP && webhooks.some((w) => w.rules.some((rule) => rule.apiGroups.some((g) => g === '*' || g === group)));
}

/**
 * What audit and the background audit list: every discovered resource some webhook's rules match
 * on CREATE, each once (the group's preferred version when a rule matches it, else the first
 * matching version).
 */
export function auditTargets(resources: readonly DiscoveredResource[], webhooks: readonly Webhook[]): DiscoveredResource[] {
  const chosen = new Map<string, DiscoveredResource>();
  for (const resource of resources) {
    if (resource.group === NEVER_SENT_GROUP || !matchedOnCreate(resource, webhooks)) continue;
    const key = `${resource.group}/${resource.resource}`;
    const current = chosen.get(key);
    if (!current || (resource.preferred && !current.preferred)) chosen.set(key, resource);
  }
  return [...chosen.values()];
}
