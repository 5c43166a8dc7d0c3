/**
 * I3: after every step the live configurations converge to the newest policy file within the
 * stated bound. Live means what admission reads: the stored configurations and each running
 * kube-apiserver's cache of them (a lag spike must pass, a restarted one must list afresh). The
 * webhooks wanted are computed from the policy text and docs/policy.md's defaults
 * (expected-configurations.ts), never from src/.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../../../../local-cluster/fake-apiserver/index.js';
import { expectedWebhooksOf, webhookFacts, type StoredWebhook } from '../../expected-configurations.js';
import type { PolicyHistory } from '../policy-history.js';
import { NAME, NS, type World } from '../world.js';

type Kind = 'mutating' | 'validating';
const KINDS: readonly Kind[] = ['mutating', 'validating'];

/** What still differs from the newest policy; empty when converged. */
export function divergence(world: World, history: PolicyHistory): string[] {
  const expected = expectedWebhooksOf(history.newest.text, { serviceName: NAME, namespace: NS });
  const problems: string[] = [];
  for (const kind of KINDS) {
    const resource = `${kind}webhookconfigurations` as const;
    const stored = world.store.get(resource, undefined, NAME);
    if (!stored) {
      problems.push(`${kind} configuration missing`);
      continue;
    }
    const actual = ((stored['webhooks'] as StoredWebhook[] | undefined) ?? []).map((w) => webhookFacts(w, kind));
    const names = (list: readonly { name: string }[]): string => list.map((w) => w.name).join(', ');
    if (names(actual) !== names(expected[kind])) problems.push(`${kind} webhooks are [${names(actual)}], the newest policy (v${history.newest.version}) wants [${names(expected[kind])}]`);
    else for (const [i, facts] of actual.entries()) if (!isDeepStrictEqual(facts, expected[kind][i])) problems.push(`${kind} webhook ${facts.name} differs from policy v${history.newest.version}`);
    for (const apiserver of world.cluster.api.apiservers) {
      if (!apiserver.up) continue;
      const cached = apiserver.configurations(resource).find((c: KubeObject) => c.metadata?.name === NAME);
      if (cached?.metadata?.resourceVersion !== stored.metadata?.resourceVersion) problems.push(`${apiserver.name}'s cache of the ${kind} configuration lags the store`);
    }
  }
  return problems;
}
