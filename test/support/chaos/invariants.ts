/**
 * What must hold once faults stop: both configurations back to the desired state (the webhooks the
 * policy file and the documented defaults call for, computed in expected-configurations.ts; the
 * caBundle the CAs in ca.crt now plus those that left it within the server's --ca-overlap) and a
 * live replica holding the Lease; and what must never happen: a configuration deleted
 * (enforcement lost).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject, ObjectStore } from '../../../local-cluster/fake-apiserver/index.js';
import { NAME, NAMESPACE } from '../kube/cluster-harness.js';
import { bundleFingerprints, type BundleExpectation } from './rotator.js';
import { webhookFacts, type ExpectedWebhooks } from './expected-configurations.js';
import { deadlineSignal } from '../deadline.js';

type Kind = 'mutating' | 'validating';
const KINDS: readonly Kind[] = ['mutating', 'validating'];
const LEASE = `${NAME}-leader`;

interface WebhookLike {
  clientConfig?: { caBundle?: string };
}

/** What differs between the stored webhooks of `kind` and the expected ones, by webhook name. */
function webhookDifferences(kind: Kind, stored: KubeObject, expected: ExpectedWebhooks): string[] {
  const actual = ((stored['webhooks'] as Parameters<typeof webhookFacts>[0][] | undefined) ?? []).map((w) => webhookFacts(w, kind));
  const names = (list: { name: string }[]) => list.map((w) => w.name).join(', ');
  if (names(actual) !== names(expected[kind])) return [`${kind} webhooks are [${names(actual)}], expected [${names(expected[kind])}]`];
  return actual.flatMap((facts, index) => (isDeepStrictEqual(facts, expected[kind][index]) ? [] : [`${kind} webhook ${facts.name} differs from the policy: ${JSON.stringify(facts)}`]));
}

/** The webhooks with their caBundles set aside, and the CAs each bundle holds. */
function split(configuration: KubeObject | undefined): { webhooks: unknown[]; bundles: string[][] } | undefined {
  if (!configuration) return undefined;
  const webhooks = (configuration['webhooks'] as WebhookLike[] | undefined) ?? [];
  return {
    webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: undefined } })),
    bundles: webhooks.map((w) => bundleFingerprints(Buffer.from(w.clientConfig?.caBundle ?? '', 'base64').toString('utf8'))),
  };
}

interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
}

const leaseSpec = (store: ObjectStore): LeaseSpec => (store.get('leases', NAMESPACE, LEASE) as { spec?: LeaseSpec } | undefined)?.spec ?? {};

export const leaseHolder = (store: ObjectStore): string => leaseSpec(store).holderIdentity ?? '';

/** Epoch ms of the last renewal (0 when never). The MicroTime keeps microseconds: compare at ms. */
const leaseRenewedAtMs = (store: ObjectStore): number => {
  const renewTime = leaseSpec(store).renewTime;
  return renewTime === undefined ? 0 : Math.floor(new Date(renewTime).getTime());
};

/**
 * What still differs from the desired state; empty when converged. The Lease must have been renewed
 * at or after `renewedSinceMs` (epoch ms): a holder that stepped down during an outage is still
 * named in the Lease but reconciles nothing until a renewal succeeds.
 */
export function divergence(store: ObjectStore, desired: ExpectedWebhooks, bundle: BundleExpectation, live: readonly string[], renewedSinceMs: number): string[] {
  const problems: string[] = [];
  for (const kind of KINDS) {
    const stored = store.get(`${kind}webhookconfigurations`, undefined, NAME);
    const parts = split(stored);
    const differences = stored ? webhookDifferences(kind, stored, desired) : [];
    if (!parts) problems.push(`${kind} configuration missing`);
    else if (differences.length > 0) problems.push(...differences);
    else if (!parts.bundles.every((b) => meets(b, bundle))) problems.push(`${kind} caBundle is not the CAs in ca.crt plus those within the overlap`);
  }
  const holder = leaseHolder(store);
  if (!live.includes(holder)) problems.push(`the Lease holder "${holder}" is not a live replica`);
  else if (leaseRenewedAtMs(store) < renewedSinceMs) problems.push(`the Lease holder "${holder}" has not renewed since the fault`);
  return problems;
}

/** A registered bundle (sorted fingerprints) holds every required CA and nothing beyond the allowed ones. */
function meets(registered: readonly string[], expected: BundleExpectation): boolean {
  return expected.required.every((f) => registered.includes(f)) && registered.every((f) => expected.allowed.includes(f));
}

/** Problems while either configuration's caBundle does not meet `expected`. */
export function bundleProblems(store: ObjectStore, expected: BundleExpectation): string[] {
  return KINDS.filter((kind) => {
    const parts = split(store.get(`${kind}webhookconfigurations`, undefined, NAME));
    return !parts || !parts.bundles.every((b) => meets(b, expected));
  }).map((kind) => `${kind} caBundle is not yet the new bundle`);
}

/** Resolves with the ms it took once nothing diverges; checked now and on every store change. */
export function awaitConvergence(
  store: ObjectStore,
  check: () => string[],
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<number> {
  const began = performance.now();
  return new Promise((resolve, reject) => {
    const deadline = deadlineSignal(options.timeoutMs, options.signal);
    let unsubscribe = (): void => undefined;
    const finish = (settle: () => void): void => {
      unsubscribe();
      deadline.removeEventListener('abort', onAbort);
      settle();
    };
    const test = (): void => {
      if (check().length === 0) finish(() => resolve(performance.now() - began));
    };
    const onAbort = (): void => finish(() => reject(new Error(`not converged within ${options.timeoutMs} ms: ${check().join('; ')}`)));
    deadline.addEventListener('abort', onAbort, { once: true });
    unsubscribe = store.subscribe(test);
    test();
  });
}

/** Counts deletions of the configurations for the whole run (the store outlives API restarts). */
export function watchForDeletions(store: ObjectStore): { deletions: () => number; stop: () => void } {
  let deletions = 0;
  const stop = store.subscribe((event) => {
    if (event.type === 'DELETED' && event.resource.endsWith('webhookconfigurations')) deletions++;
  });
  return { deletions: () => deletions, stop };
}

/** An edit someone else makes (a shorter timeout on the last validating webhook): the leader must undo it. */
export function tamperWithValidating(store: ObjectStore): void {
  const configuration = store.get('validatingwebhookconfigurations', undefined, NAME);
  const webhooks = configuration?.['webhooks'] as { timeoutSeconds?: number }[] | undefined;
  const last = webhooks?.at(-1);
  if (!configuration || !last) throw new Error('no validating configuration to tamper with');
  last.timeoutSeconds = (last.timeoutSeconds ?? 10) === 7 ? 8 : 7;
  store.update('validatingwebhookconfigurations', configuration, { manager: 'someone-else' });
}
