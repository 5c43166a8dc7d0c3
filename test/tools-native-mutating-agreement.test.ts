// defaultLabels as a MutatingAdmissionPolicy: the entry -> MAP/Binding
// mapping, the API double's copy of kube-apiserver's validation accepting it as written, and the
// same result from both engines. For the same Pods and Deployments, the labels and annotations
// `evaluate` says the webhook's built-in leaves (the product's own code) equal those the double's
// MutatingAdmissionPolicy plugin leaves (its JSONPatch applied by fast-json-patch, its CEL by
// @bufbuild/cel, not the product's library), for hand-listed objects (keys with `/` and `~`,
// values with quotes, present and absent maps) and generated ones (fast-check;
// NATIVE_AGREEMENT_SEED=<seed> replays them).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import t, { type Test } from 'tap';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { defaultLabelsExpression } from '../src/registration/native-mutations.js';
import { mutatingPolicyObjects, nativePolicyObjects, type NativeInput } from '../src/registration/native-policy-objects.js';
import { entryObstacles } from '../src/policy/engine.js';
import { nativeObstacles } from '../src/policy/engine.js';
import { doubleMutated, installMapped, loadProductPolicy, OWN_NAMESPACE, productMutated, startPolicyDouble, type WriteCase } from './support/policy/native-agreement.js';
import { policyText } from './support/policy/policy-text.js';

const SEED = process.env.NATIVE_AGREEMENT_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.NATIVE_AGREEMENT_SEED);
t.comment(`seed ${SEED} (NATIVE_AGREEMENT_SEED=${SEED} replays it)`);

const POLICY = policyText(`  - name: team-labels
    kind: defaultLabels
    engine: native
    params:
      labels: { team: platform, "example.com/tier": "web" }
      annotations: { "example.com/owner": "say \\"hi\\" \\\\ ☃", contact: "ops@example.com" }
  - name: cost-center
    kind: defaultLabels
    engine: auto
    reinvocationPolicy: IfNeeded
    failurePolicy: Ignore
    rules:
      - { operations: [CREATE, UPDATE, DELETE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    objectSelector: { matchExpressions: [{ key: opt-out, operator: DoesNotExist }] }
    params:
      labels: { cost-center: "42" }
  - name: dry-labels
    kind: defaultLabels
    mode: warn
    engine: auto
    params:
      labels: { dry: run }
  - name: resources
    kind: defaultResources
    engine: native
    # Not the CronJob: two mutating entries that set the same field run in another order natively
    # (kube-apiserver: MAPs by name, before every webhook) than as webhooks (the policy's order).
    rules:
      - { operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }
      - { operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    params:
      requests: { cpu: 100m, memory: 64Mi }
      limits: { cpu: 500m, memory: 1Gi }
  - name: cpu-limit-only
    kind: defaultResources
    engine: native
    rules:
      - { operations: [CREATE], apiGroups: [batch], apiVersions: [v1], resources: [cronjobs] }
    params:
      limits: { cpu: "1" }
`);

const dir = await mkdtemp(join(tmpdir(), 'native-mutating-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const policy = await loadProductPolicy(dir, POLICY);
const entry = (name: string) => policy.entries.find((e) => e.spec.name === name)!;
const INPUT: NativeInput = { configName: 'kas', namespace: OWN_NAMESPACE, excludedNamespaces: ['kube-system'], owner: { name: 'kas', uid: 'owner-uid' } };

t.test('the entry -> MutatingAdmissionPolicy/Binding mapping', async (t) => {
  const { policy: map, binding } = mutatingPolicyObjects(entry('team-labels'), INPUT);
  t.equal(map.apiVersion, 'admissionregistration.k8s.io/v1beta1');
  t.equal(map.kind, 'MutatingAdmissionPolicy');
  t.equal(map.metadata?.name, 'kas-team-labels');
  t.same(map.metadata?.labels, { 'app.kubernetes.io/managed-by': 'kube-admission-server', 'kube-admission-server.io/configuration': 'kas' });
  t.same(map.metadata?.ownerReferences, [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'kas', uid: 'owner-uid' }]);
  t.equal(map.spec?.failurePolicy, 'Ignore', 'a mutating entry fails open by default, as its webhook');
  t.equal(map.spec?.reinvocationPolicy, 'Never');
  t.same(map.spec?.matchConstraints?.resourceRules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }]);
  t.same(map.spec?.matchConstraints?.namespaceSelector?.matchExpressions, [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [OWN_NAMESPACE, 'kube-system'] }]);
  t.same(map.spec?.mutations, [{ patchType: 'JSONPatch', jsonPatch: { expression: defaultLabelsExpression(entry('team-labels').nativeMutation as never) } }]);
  t.match(map.spec?.mutations?.[0]?.jsonPatch?.expression, '"/metadata/labels/example.com~1tier"', 'a key\'s "/" escaped in the JSON pointer');
  t.match(defaultLabelsExpression({ kind: 'defaultLabels', labels: {}, annotations: { 'a~b': 'x' } }), '"/metadata/annotations/a~0b"', 'and "~"');
  t.notMatch(defaultLabelsExpression({ kind: 'defaultLabels', labels: {}, annotations: { a: 'x' } }), 'labels', 'no operation on a map the entry does not default');
  t.same(binding.spec, { policyName: 'kas-team-labels' });
  const cost = mutatingPolicyObjects(entry('cost-center'), INPUT).policy;
  t.equal(cost.spec?.reinvocationPolicy, 'IfNeeded');
  t.equal(cost.spec?.failurePolicy, 'Ignore');
  t.same(cost.spec?.matchConstraints?.resourceRules?.[0]?.operations, ['CREATE', 'UPDATE'], 'DELETE left out: a MAP cannot match it, and the webhook patches no DELETE');
  t.same(cost.spec?.matchConstraints?.objectSelector, { matchExpressions: [{ key: 'opt-out', operator: 'DoesNotExist' }] });
  t.match(nativeObstacles(entry('dry-labels')), [/mode warn reports what the rule would change without changing it: only the webhook can/]);
  t.throws(() => nativePolicyObjects(entry('dry-labels'), INPUT), /cannot run natively/);
  const deleteOnly = { ...entry('cost-center'), spec: { ...entry('cost-center').spec, rules: [{ ...entry('cost-center').spec.rules[0]!, operations: ['DELETE' as const] }] } };
  t.match(entryObstacles(deleteOnly), [/match only DELETE/]);
});

const pod = (name: string, namespace: string, labels?: Record<string, string>, annotations?: Record<string, string>, spec: Json = { containers: [{ name: 'c', image: 'nginx:1.27' }] }): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
  spec,
});
const cronJob = (name: string, namespace: string, containers: Json[]): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name, namespace },
  spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers } } } } },
});
const deployment = (name: string, namespace: string, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace, ...(labels ? { labels } : {}) },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
});
type Json = Record<string, unknown>;
const rec = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
/** Where the pod spec is, as the built-in reads it. */
const podSpecOf = (object: KubeObject | null): Json => {
  const path = { Pod: ['spec'], Deployment: ['spec', 'template', 'spec'], CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'] }[object?.kind ?? ''] ?? [];
  return path.reduce<Json>((at, key) => rec(at[key]), rec(object));
};
/**
 * A container's resources as kube-apiserver stores them: a limit without a request gives the
 * request its value (SetDefaults_Pod; `evaluate` applies it to the object it sends, the double's
 * Pod defaulting does not, so both sides get it here); none and {} alike (the double writes {}).
 */
const storedResources = (value: unknown): Json => {
  const resources = structuredClone(rec(value));
  const limits = rec(resources['limits']);
  const requests = { ...Object.fromEntries(Object.entries(limits)), ...rec(resources['requests']) };
  return { ...resources, ...(Object.keys(requests).length > 0 ? { requests } : {}) };
};
/** What the two built-ins touch: labels, annotations, each container's resources. */
const metaOf = (object: KubeObject | null): Json => {
  const spec = podSpecOf(object);
  const resources = Object.fromEntries(
    ['containers', 'initContainers'].flatMap((list) => (Array.isArray(spec[list]) ? (spec[list] as unknown[]).map((c) => [`${list}/${String(rec(c).name)}`, storedResources(rec(c).resources)]) : [])),
  );
  return { labels: object?.metadata?.labels, annotations: object?.metadata?.annotations, resources };
};

const double = await startPolicyDouble({ 'team-a': {}, 'team-b': { tier: 'free' } });
t.teardown(() => double.close());

t.test('the double accepts the mapped objects as written', async (t) => {
  const leftWithWebhook = await installMapped(double.api, policy);
  t.match(leftWithWebhook, [/^dry-labels: mode warn/], 'only the warn entry stays with the webhook');
  const resources = mutatingPolicyObjects(entry('resources'), INPUT).policy;
  t.equal(resources.spec?.mutations?.length, 4 * 2 * 2 * 2, 'defaultResources: a request and a limit mutation per pod spec path, container list and resource');
  t.ok(resources.spec?.mutations?.every((m) => m.patchType === 'ApplyConfiguration'));
  const stored = double.api.store.get('mutatingadmissionpolicies', undefined, 'kas-team-labels');
  t.same(stored?.spec, mutatingPolicyObjects(entry('team-labels'), { ...INPUT, owner: undefined }).policy.spec, 'every default already written out (a read-back compares equal)');
});

// The warn entry runs only in the webhook: it reports and changes nothing, so it is left out of the product's side too.
const compared = { ...policy, webhooks: policy.webhooks.filter((w) => w.name !== 'dry-labels') };

async function agree(t: Test, write: WriteCase): Promise<void> {
  const product = await productMutated(compared, write);
  const native = await doubleMutated(double, write);
  t.same(metaOf(native), metaOf(product), write.label);
}

t.test('hand-listed writes: both engines leave the same labels and annotations', async (t) => {
  const writes: WriteCase[] = [
    { label: 'a Pod with no labels or annotations', operation: 'CREATE', object: pod('bare', 'team-a') },
    { label: 'a Pod with some of the labels set otherwise', operation: 'CREATE', object: pod('some', 'team-a', { team: 'mine', app: 'x' }, { contact: 'me' }) },
    { label: 'a Pod with every default already there', operation: 'CREATE', object: pod('all', 'team-a', { team: 'a', 'example.com/tier': 'b' }, { 'example.com/owner': 'o', contact: 'c' }) },
    { label: 'a Pod with empty maps', operation: 'CREATE', object: pod('empty', 'team-b', {}, {}) },
    { label: 'a Pod in the server\'s own namespace is left alone', operation: 'CREATE', object: pod('own', OWN_NAMESPACE) },
    { label: 'a Deployment gets the cost-center label', operation: 'CREATE', object: deployment('web', 'team-a', { app: 'web' }) },
    { label: 'a Deployment without labels', operation: 'CREATE', object: deployment('nolabels', 'team-a') },
    { label: 'a Deployment its objectSelector leaves out', operation: 'CREATE', object: deployment('left-out', 'team-a', { 'opt-out': 'yes' }) },
  ];
  const c = (name: string, resources?: Json): Json => ({ name, image: 'nginx:1.27', ...(resources ? { resources } : {}) });
  writes.push(
    { label: 'a Pod with containers and init containers, some resources set', operation: 'CREATE', object: pod('res', 'team-a', undefined, undefined, {
      initContainers: [c('init'), c('init-limited', { limits: { memory: '128Mi' } })],
      containers: [c('bare'), c('cpu-requested', { requests: { cpu: '2' } }), c('small-request', { requests: { cpu: '200m' } }), c('limited', { limits: { cpu: '250m', memory: '2Gi' } }), c('empty', {})],
    }) },
    { label: 'a Pod whose request is above the default limit: no limit', operation: 'CREATE', object: pod('big', 'team-a', undefined, undefined, { containers: [c('big', { requests: { cpu: '1500m', memory: '2Gi' } })] }) },
    { label: 'a Deployment\'s pod template', operation: 'CREATE', object: { ...deployment('res', 'team-a', { app: 'res' }), spec: { replicas: 1, selector: { matchLabels: { app: 'res' } }, template: { metadata: { labels: { app: 'res' } }, spec: { containers: [c('a'), c('b', { requests: { memory: '1Gi' } })] } } } } },
    { label: 'a CronJob\'s job template (only the cpu limit entry matches)', operation: 'CREATE', object: cronJob('nightly', 'team-a', [c('a'), c('b', { requests: { cpu: '2' } })]) },
  );
  for (const write of writes) await agree(t, write);
  const res = metaOf(await doubleMutated(double, writes.find((w) => w.label.startsWith('a Pod with containers'))!)).resources as Json;
  t.same(res['containers/bare'], { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '1Gi' } }, 'the double did default the resources');
  const bare = await doubleMutated(double, writes[0]!);
  t.same(bare.metadata?.labels, { team: 'platform', 'example.com/tier': 'web' }, 'the double did mutate (the comparison is not between two unchanged objects)');
  t.equal(bare.metadata?.annotations?.['example.com/owner'], 'say "hi" \\ ☃');
  const leftOut = await doubleMutated(double, writes.find((w) => w.label.includes('leaves out'))!);
  t.same(leftOut.metadata?.labels, { 'opt-out': 'yes' }, 'the Deployment the objectSelector leaves out kept its labels (no cost-center)');
});

t.test('generated writes: both engines leave the same labels and annotations', async (t) => {
  const keys = fc.constantFrom('team', 'example.com/tier', 'app', 'cost-center', 'opt-out');
  const map = fc.option(fc.dictionary(keys, fc.constantFrom('x', 'platform', ''), { maxKeys: 4 }), { nil: undefined });
  const annotationKeys = fc.constantFrom('example.com/owner', 'contact', 'note');
  const annotations = fc.option(fc.dictionary(annotationKeys, fc.constantFrom('y', 'say "hi"'), { maxKeys: 3 }), { nil: undefined });
  const amount = (values: string[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
  const amounts = fc.record({ cpu: amount(['50m', '100m', '250m', '2']), memory: amount(['32Mi', '64Mi', '2Gi']) }).map((a) => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)));
  const resourcesArb = fc.option(fc.record({ requests: amounts, limits: amounts }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => Object.keys(v).length > 0))), { nil: undefined });
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom('Pod', 'Deployment'), fc.constantFrom('team-a', 'team-b', OWN_NAMESPACE), map, annotations, resourcesArb, async (kind, namespace, labels, notes, resources) => {
      n += 1;
      const name = `gen-${n}`;
      const object = kind === 'Pod' ? pod(name, namespace, labels, notes) : deployment(name, namespace, labels);
      const spec = podSpecOf(object);
      spec['containers'] = [{ name: 'c', image: 'nginx:1.27', ...(resources ? { resources } : {}) }];
      if (kind === 'Deployment' && notes) object.metadata = { ...object.metadata, annotations: notes };
      const write: WriteCase = { label: `${kind} ${namespace}/${name} ${JSON.stringify({ labels, notes, resources })}`, operation: 'CREATE', object };
      const product = metaOf(await productMutated(compared, write));
      const native = metaOf(await doubleMutated(double, write));
      if (!isDeepStrictEqual(native, product)) t.same(native, product, write.label);
      return isDeepStrictEqual(native, product);
    }),
    { seed: SEED, numRuns: 60 },
  );
  t.pass('60 generated writes agree');
});
