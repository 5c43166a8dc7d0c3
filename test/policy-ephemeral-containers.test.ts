/**
 * Which built-in rules kube-apiserver must call for `kubectl debug` (an UPDATE of
 * pods/ephemeralcontainers): exactly those whose answer a debug container can change. The oracle
 * is each rule's own behaviour: the same running Pod reviewed with and without a debug container
 * that breaks everything a debug container can break.
 */
import t from 'tap';
import { BUILT_IN_RULES } from '../src/policy/rules/index.js';
import type { KubeObject, Webhook } from '../src/admission/types.js';
import { admissionRequest, pod, review, webhooksFrom } from './support/policy/policy-fixtures.js';

const EVERY_KIND_POLICY = `webhooks:
  - { name: require-labels, kind: requireLabels, params: { labels: [{ key: app }] } }
  - { name: deny-privileged, kind: denyPrivileged, params: { deniedCapabilities: [SYS_ADMIN] } }
  - { name: deny-host-namespaces, kind: denyHostNamespaces, params: { hostPorts: true } }
  - { name: allowed-registries, kind: allowedRegistries, params: { registries: [registry.k8s.io/] } }
  - { name: default-labels, kind: defaultLabels, params: { labels: { team: platform } } }
  - { name: default-resources, kind: defaultResources, params: { requests: { cpu: 50m } } }
`;
const EVERY_KIND = webhooksFrom(EVERY_KIND_POLICY);

/**
 * What a debug container can carry past kube-apiserver's validation, which runs before validating
 * webhooks: a security context and any image. Ports, probes and resources are refused for
 * ephemeral containers, and nothing else of the Pod may change on this subresource.
 */
const WORST_DEBUG_CONTAINER = {
  name: 'debugger',
  image: 'quay.io/tools/debug:latest',
  targetContainerName: 'app',
  securityContext: { privileged: true, allowPrivilegeEscalation: true, capabilities: { add: ['SYS_ADMIN'] } },
};

const running = (): KubeObject => pod({ containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', resources: { requests: { cpu: '10m' } } }] }, { app: 'web', team: 'a' });

function withDebugContainer(object: KubeObject): KubeObject {
  const copy = structuredClone(object);
  (copy['spec'] as Record<string, unknown>)['ephemeralContainers'] = [WORST_DEBUG_CONTAINER];
  return copy;
}

const registeredForDebug = (webhook: Webhook): boolean =>
  webhook.rules.some((rule) => rule.resources.includes('pods/ephemeralcontainers') && (rule.operations.includes('UPDATE') || rule.operations.includes('*')));

t.test('the probe covers every built-in rule kind with default rules', async (t) => {
  // A cel rule has no default rules: its author lists them (docs/policy.md says to add the
  // subresource when the expressions read containers).
  const withDefaults = [...BUILT_IN_RULES.keys()].filter((kind) => kind !== 'cel').sort();
  t.same([...EVERY_KIND_POLICY.matchAll(/kind: (\w+)/g)].map((match) => match[1]).sort(), withDefaults, 'a new rule kind must be added to this test');
});

for (const webhook of EVERY_KIND) {
  t.test(`${webhook.name}: registered for pods/ephemeralcontainers exactly when a debug container changes its answer`, async (t) => {
    const old = running();
    const unchanged = await review(webhook, admissionRequest(structuredClone(old), { operation: 'UPDATE', oldObject: old }));
    const debugged = await review(webhook, admissionRequest(withDebugContainer(old), { operation: 'UPDATE', oldObject: old }));
    const reacts = JSON.stringify(unchanged) !== JSON.stringify(debugged);
    t.equal(registeredForDebug(webhook), reacts, reacts ? 'a debug container changes the answer: it must be called' : 'nothing a debug container carries changes the answer: no call');
  });
}

t.test('the subresource rule is an UPDATE on core v1 pods/ephemeralcontainers', async (t) => {
  const denyPrivileged = EVERY_KIND.find((w) => w.name === 'deny-privileged')!;
  t.same(
    denyPrivileged.rules.filter((rule) => rule.resources.includes('pods/ephemeralcontainers')),
    [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'], scope: 'Namespaced' }],
  );
  t.ok(denyPrivileged.rules.some((rule) => rule.resources.includes('pods') && rule.operations.includes('CREATE')), 'pods themselves are still covered');
});
