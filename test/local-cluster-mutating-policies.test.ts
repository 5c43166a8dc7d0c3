// MutatingAdmissionPolicies in the double, as kube-apiserver 1.34+ runs them
// (admissionregistration.k8s.io/v1beta1): stored with kube-apiserver's validation and defaults
// (pkg/apis/admissionregistration/validation/validation.go, validateMutatingAdmissionPolicySpec,
// validateMutation, validateMutatingAdmissionPolicyBindingSpec; texts and field paths as there),
// evaluated on writes first of the mutating plugins, before the mutating webhooks (AllOrderedPlugins),
// with JSONPatch and ApplyConfiguration mutations built by CEL in @bufbuild/cel (not the server's
// library), reinvoked after the webhooks when reinvocationPolicy is IfNeeded.
import t from 'tap';
import { register, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { mergeApplyConfiguration } from '../local-cluster/admission-caller/apply-merge.js';
import { startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { evaluateCel, evaluateMutation } from '../local-cluster/fake-apiserver/policy-cel.js';
import { parseQuantity } from '../local-cluster/fake-apiserver/policy-cel-quantity.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { allow, jsonPatchResponse } from '../local-cluster/fake-apiserver/webhook-server.js';
import { serveHookAsService, startAdmissionWorld } from './support/kube/admission-world.js';

const world = await startAdmissionWorld(t, ['webhooks', 'team-a'], 'mutating-policies-');
const { api, hook } = world;

const RESOURCES = ['mutatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingwebhookconfigurations', 'configmaps'];
const clear = (): void => {
  for (const resource of RESOURCES) for (const o of api.store.list(resource, resource === 'configmaps' ? 'team-a' : undefined)) api.store.delete(resource, o.metadata?.namespace, o.metadata?.name ?? '');
  for (const o of api.store.list('pods', 'team-a')) api.store.delete('pods', 'team-a', o.metadata?.name ?? '');
  hook.received.length = 0;
  world.respond = allow;
};

const POD_RULES = { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] };
const policy = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1beta1',
  kind: 'MutatingAdmissionPolicy',
  metadata: { name },
  spec: { matchConstraints: POD_RULES, reinvocationPolicy: 'Never', ...spec },
});
const binding = (name: string, policyName: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1beta1',
  kind: 'MutatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName, ...spec },
});
const jsonPatch = (expression: string): Record<string, unknown> => ({ patchType: 'JSONPatch', jsonPatch: { expression } });
const apply = (expression: string): Record<string, unknown> => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const pod = (name: string, labels?: Record<string, string>, containers: Array<Record<string, unknown>> = [{ name: 'app', image: 'nginx:1.27' }]): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { containers },
});

// Replies are read field by field as the API wrote them; their shape is what each test checks.
type Reply = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function create(resource: string, object: KubeObject, namespace?: string): Promise<{ status: number; json: Reply }> {
  const type = api.store.types.get(resource);
  const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const path = namespace ? `${prefix}/namespaces/${namespace}/${type.resource}` : `${prefix}/${type.resource}`;
  const reply = await rawRequest(api, 'POST', path, { body: object });
  return { status: reply.status, json: reply.json as Reply };
}
const causes = (reply: { json: Reply }): Array<{ field: string; message: string }> => (reply.json?.details?.causes ?? []).map((c: { field: string; message: string }) => ({ field: c.field, message: c.message }));

t.test('the API stores policies and bindings with kube-apiserver\'s defaults', async (t) => {
  clear();
  const created = await create('mutatingadmissionpolicies', policy('add-team', { mutations: [jsonPatch('[JSONPatch{op: "add", path: "/metadata/labels/team", value: "a"}]')] }));
  t.equal(created.status, 201, JSON.stringify(created.json));
  t.equal(created.json.spec.failurePolicy, 'Fail');
  t.same(created.json.spec.matchConstraints.namespaceSelector, {});
  t.equal(created.json.spec.matchConstraints.matchPolicy, 'Equivalent');
  t.equal(created.json.spec.matchConstraints.resourceRules[0].scope, '*');
  const bound = await create('mutatingadmissionpolicybindings', binding('add-team', 'add-team', { matchResources: { resourceRules: POD_RULES.resourceRules } }));
  t.equal(bound.status, 201, JSON.stringify(bound.json));
  t.equal(bound.json.spec.matchResources.matchPolicy, 'Equivalent');
});

t.test('invalid policies and bindings are refused with kube-apiserver\'s texts and field paths', async (t) => {
  clear();
  const cases: Array<[string, KubeObject, Array<{ field: string; message: string }>]> = [
    ['no mutations', policy('p', { mutations: [] }), [{ field: 'spec.mutations', message: 'Required value: mutations must contain at least one item' }]],
    [
      'DELETE cannot be mutated',
      policy('p', { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'DELETE'], resources: ['pods'] }] }, mutations: [jsonPatch('[]')] }),
      [{ field: 'spec.matchConstraints.resourceRules.operations', message: 'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"' }],
    ],
    ['reinvocationPolicy is required (no default)', policy('p', { reinvocationPolicy: undefined, mutations: [jsonPatch('[]')] }), [{ field: 'spec.reinvocationPolicy', message: 'Required value' }]],
    ['an unknown reinvocationPolicy', policy('p', { reinvocationPolicy: 'Always', mutations: [jsonPatch('[]')] }), [{ field: 'spec.reinvocationPolicy', message: 'Unsupported value: "Always": supported values: "IfNeeded", "Never"' }]],
    ['patchType is required', policy('p', { mutations: [{ jsonPatch: { expression: '[]' } }] }), [{ field: 'spec.mutations[0].patchType', message: 'Required value' }]],
    ['an unknown patchType', policy('p', { mutations: [{ patchType: 'Merge' }] }), [{ field: 'spec.mutations[0].patchType', message: 'Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"' }]],
    ['JSONPatch without jsonPatch', policy('p', { mutations: [{ patchType: 'JSONPatch' }] }), [{ field: 'spec.mutations[0].jsonPatch', message: 'Required value: must be specified when patchType is JSONPatch' }]],
    [
      'ApplyConfiguration with a jsonPatch too',
      policy('p', { mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: { expression: 'Object{}' }, jsonPatch: { expression: '[]' } }] }),
      [{ field: 'spec.mutations[0].jsonPatch', message: 'Invalid value: "{jsonPatch}": must not be specified when patchType is ApplyConfiguration' }],
    ],
    ['an empty expression', policy('p', { mutations: [apply('  ')] }), [{ field: 'spec.mutations[0].applyConfiguration.expression', message: 'Required value' }]],
  ];
  for (const [what, object, expected] of cases) {
    const reply = await create('mutatingadmissionpolicies', object);
    t.equal(reply.status, 422, what);
    t.same(causes(reply), expected, what);
  }
  const unparsable = await create('mutatingadmissionpolicies', policy('p', { mutations: [jsonPatch('[JSONPatch{op: ')] }));
  t.equal(unparsable.status, 422);
  t.equal(causes(unparsable)[0]?.field, 'spec.mutations[0].jsonPatch.expression');
  t.match(causes(unparsable)[0]?.message, /compilation failed: ERROR: /);
  const bindingCases: Array<[string, KubeObject, Array<{ field: string; message: string }>]> = [
    ['policyName is required', binding('b', ''), [{ field: 'spec.policyName', message: 'Required value' }]],
    [
      'a binding cannot select DELETE either',
      binding('b', 'p', { matchResources: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['DELETE'], resources: ['pods'] }] } }),
      [{ field: 'spec.matchResources.resourceRules.operations', message: 'Unsupported value: "DELETE": supported values: "*", "CONNECT", "CREATE", "UPDATE"' }],
    ],
    ['paramRef needs parameterNotFoundAction', binding('b', 'p', { paramRef: { name: 'x' } }), [{ field: 'spec.paramRef.parameterNotFoundAction', message: 'Required value' }]],
  ];
  for (const [what, object, expected] of bindingCases) {
    const reply = await create('mutatingadmissionpolicybindings', object);
    t.equal(reply.status, 422, what);
    t.same(causes(reply), expected, what);
  }
});

t.test('a cluster older than 1.34 serves no MutatingAdmissionPolicy', async (t) => {
  const old = await startFakeApiServer({ namespaces: [], version: 'v1.33.4' });
  t.teardown(() => old.close());
  const reply = await rawRequest(old, 'GET', '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies');
  t.equal(reply.status, 404);
  const current = await rawRequest(api, 'GET', '/apis/admissionregistration.k8s.io/v1beta1');
  t.ok(((current.json as { resources: Array<{ name: string }> }).resources ?? []).some((r) => r.name === 'mutatingadmissionpolicies'), 'served by 1.35');
});

t.test('JSONPatch: labels added where missing, a failed test leaves the object, params from a ConfigMap', async (t) => {
  clear();
  await create('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'team' }, data: { team: 'blue' } }, 'team-a');
  await create('mutatingadmissionpolicies', policy('add-team', {
    paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
    mutations: [
      jsonPatch('(has(object.metadata.labels) ? [] : [JSONPatch{op: "add", path: "/metadata/labels", value: {}}]) + (has(object.metadata.labels) && "team" in object.metadata.labels ? [] : [JSONPatch{op: "add", path: "/metadata/labels/team", value: params.data.team}])'),
      jsonPatch('[JSONPatch{op: "test", path: "/metadata/labels/team", value: "red"}, JSONPatch{op: "add", path: "/metadata/labels/red", value: "yes"}]'),
    ],
  }));
  await create('mutatingadmissionpolicybindings', binding('add-team', 'add-team', { paramRef: { name: 'team', namespace: 'team-a', parameterNotFoundAction: 'Deny' } }));
  const bare = await create('pods', pod('bare'), 'team-a');
  t.equal(bare.status, 201, JSON.stringify(bare.json));
  t.same(bare.json.metadata.labels, { team: 'blue' }, 'labels created, then the label added');
  const kept = await create('pods', pod('kept', { team: 'red', app: 'x' }), 'team-a');
  t.same(kept.json.metadata.labels, { team: 'red', app: 'x', red: 'yes' }, 'an existing value is kept; the test passed, so its patch applied');
  api.store.delete('configmaps', 'team-a', 'team');
  await new Promise((resolve) => setTimeout(resolve, 20));
  const missing = await create('pods', pod('missing'), 'team-a');
  t.equal(missing.status, 422, 'params missing under Deny fail the request under failurePolicy Fail');
  t.match(missing.json.message, "policy 'add-team' with binding 'add-team' denied request: failed to configure binding:");
});

t.test('ApplyConfiguration: containers merged by name, maps key by key, other fields kept', async (t) => {
  clear();
  await create('mutatingadmissionpolicies', policy('requests', {
    mutations: [
      apply('Object{spec: Object.spec{containers: object.spec.containers.filter(c, !has(c.resources) || !has(c.resources.requests) || !("cpu" in c.resources.requests)).map(c, Object.spec.containers{name: c.name, resources: Object.spec.containers.resources{requests: {"cpu": "100m"}}})}}'),
    ],
  }));
  await create('mutatingadmissionpolicybindings', binding('requests', 'requests'));
  const created = await create('pods', pod('two', undefined, [
    { name: 'a', image: 'nginx:1.27', resources: { requests: { memory: '64Mi' } } },
    { name: 'b', image: 'busybox:1.36', resources: { requests: { cpu: '2' } } },
  ]), 'team-a');
  t.equal(created.status, 201, JSON.stringify(created.json));
  const containers = created.json.spec.containers as Array<{ name: string; image: string; resources: { requests: Record<string, string> } }>;
  t.same(containers.map((c) => [c.name, c.image, c.resources.requests]), [
    ['a', 'nginx:1.27', { memory: '64Mi', cpu: '100m' }],
    ['b', 'busybox:1.36', { cpu: '2' }],
  ]);
  const wrong = await create('mutatingadmissionpolicies', policy('wrong', { mutations: [apply('Object{spec: Object.spec{containers: [Object.spec.wrong{name: "a"}]}}')] }));
  t.equal(wrong.status, 201, 'the type names are checked at evaluation, as kube-apiserver does');
  await create('mutatingadmissionpolicybindings', binding('wrong', 'wrong'));
  const mismatch = await create('pods', pod('three'), 'team-a');
  t.equal(mismatch.status, 422);
  t.match(mismatch.json.message, "policy 'wrong' with binding 'wrong' denied request: ");
  t.match(mismatch.json.message, 'type mismatch');
});

t.test('failurePolicy Ignore passes an error over; a false matchCondition skips the policy', async (t) => {
  clear();
  await create('mutatingadmissionpolicies', policy('broken', { failurePolicy: 'Ignore', mutations: [jsonPatch('[JSONPatch{op: "replace", path: "/metadata/nothing/here", value: 1}]')] }));
  await create('mutatingadmissionpolicybindings', binding('broken', 'broken'));
  await create('mutatingadmissionpolicies', policy('system-only', {
    matchConditions: [{ name: 'system', expression: 'has(object.metadata.labels) && "system" in object.metadata.labels' }],
    mutations: [jsonPatch('[JSONPatch{op: "add", path: "/metadata/labels/checked", value: "yes"}]')],
  }));
  await create('mutatingadmissionpolicybindings', binding('system-only', 'system-only'));
  const plain = await create('pods', pod('plain', { app: 'x' }), 'team-a');
  t.equal(plain.status, 201, JSON.stringify(plain.json));
  t.same(plain.json.metadata.labels, { app: 'x' });
  const system = await create('pods', pod('sys', { system: 'y' }), 'team-a');
  t.same(system.json.metadata.labels, { system: 'y', checked: 'yes' });
});

t.test('order and reinvocation: policies before the mutating webhooks; IfNeeded policies run again after a webhook\'s change', async (t) => {
  clear();
  await serveHookAsService(world);
  const entry = webhookEntry('owner.example.com', hook.caBundle, {
    clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/mutate', port: 443 }, caBundle: hook.caBundle },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }],
  });
  await register(api, 'mutating', 'm', [entry]);
  world.respond = (received) => jsonPatchResponse(received, [{ op: 'add', path: '/metadata/labels/owner', value: 'platform' }]);
  const copyOwner = 'has(object.metadata.labels) && "owner" in object.metadata.labels ? [JSONPatch{op: "add", path: "/metadata/annotations", value: {"owner": object.metadata.labels["owner"]}}] : []';
  await create('mutatingadmissionpolicies', policy('copy-owner-again', { reinvocationPolicy: 'IfNeeded', mutations: [jsonPatch(copyOwner)] }));
  await create('mutatingadmissionpolicybindings', binding('copy-owner-again', 'copy-owner-again'));
  await create('mutatingadmissionpolicies', policy('stamp', { mutations: [jsonPatch('[JSONPatch{op: "add", path: "/metadata/labels/stamped", value: "yes"}]')] }));
  await create('mutatingadmissionpolicybindings', binding('stamp', 'stamp'));
  const created = await create('pods', pod('p', { app: 'x' }), 'team-a');
  t.equal(created.status, 201, JSON.stringify(created.json));
  const seen = (hook.received[0]?.review.request?.object ?? {}) as KubeObject;
  t.same(seen.metadata?.labels, { app: 'x', stamped: 'yes' }, 'the webhook received the object the policies mutated');
  t.same(created.json.metadata.labels, { app: 'x', stamped: 'yes', owner: 'platform' });
  t.same(created.json.metadata.annotations, { owner: 'platform' }, 'the IfNeeded policy ran again after the webhook added the label');
  await create('mutatingadmissionpolicies', { ...policy('copy-owner-never', { mutations: [jsonPatch(copyOwner.replace('"owner": ', '"owner-never": '))] }) });
  await create('mutatingadmissionpolicybindings', binding('copy-owner-never', 'copy-owner-never'));
  const second = await create('pods', pod('q', { app: 'y' }), 'team-a');
  t.notOk('owner-never' in (second.json.metadata.annotations ?? {}), 'a Never policy is not reinvoked');
});

t.test('the CEL adapter: JSONPatch and Object constructions evaluate to JSON; names are checked', async (t) => {
  t.same(evaluateMutation('[JSONPatch{op: "add", path: "/a", value: 1}]', {}), { value: [{ op: 'add', path: '/a', value: 1 }] });
  t.same(evaluateMutation('Object{metadata: Object.metadata{labels: {"a": "b"}}}', {}), { value: { metadata: { labels: { a: 'b' } } } });
  t.same(evaluateMutation('{"k": Object.x{a: 1}}', {}), { value: { k: { a: 1 } } }, 'a construction inside a map literal is rewritten too');
  t.match(evaluateMutation('Object{spec: Object.spec{selector: Object.spec.wrong{}}}', {}), { error: /type mismatch: Object.spec.wrong is not Object.spec.selector/ });
  t.match(evaluateMutation('Unknown{a: 1}', {}), { error: /unknown type/ }, 'other message types stay unknown');
});

t.test('the apply merge subset', async (t) => {
  const live = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'x', image: 'i', ports: [{ containerPort: 80 }] }], tolerations: [{ key: 'k' }] } };
  t.same(
    mergeApplyConfiguration(live, { metadata: { labels: { b: '2' } }, spec: { containers: [{ name: 'y', image: 'j' }, { name: 'x', ports: [{ containerPort: 81 }] }], tolerations: [{ key: 'z' }] } }),
    { metadata: { labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'x', image: 'i', ports: [{ containerPort: 81 }] }, { name: 'y', image: 'j' }], tolerations: [{ key: 'z' }] } },
    'maps merge, containers by name, other lists replaced whole',
  );
  t.same(live.metadata.labels, { a: '1' }, 'the live object is not changed');
  t.throws(() => mergeApplyConfiguration(live, { spec: { containers: [{ image: 'no-name' }] } }), /needs its key "name"/);
  t.throws(() => mergeApplyConfiguration(live, { metadata: { labels: null } }), /null value/);
  t.throws(() => mergeApplyConfiguration(live, [1]), /must be an Object/);
});

t.test('the Quantity library subset: quantity(), isQuantity(), compareTo, isGreaterThan, isLessThan', async (t) => {
  t.same(evaluateCel('quantity("100m").compareTo(quantity("0.1"))', {}), { value: 0n });
  t.same(evaluateCel('quantity("1Gi").compareTo(quantity("1G"))', {}), { value: 1n }, 'binary above decimal');
  t.same(evaluateCel('quantity("500m").isLessThan(quantity("1"))', {}), { value: true });
  t.same(evaluateCel('quantity("2").isGreaterThan(quantity("1500m"))', {}), { value: true });
  t.same(evaluateCel('isQuantity("64Mi") && !isQuantity("64MB") && !isQuantity("")', {}), { value: true });
  t.match(evaluateCel('quantity("lots")', {}), { error: /quantities must match/ });
  t.same(['1e3', '1.5k', '-2', '.5', '250m', '3Ei'].map(parseQuantity), [1000, 1500, -2, 0.5, 0.25, 3 * 2 ** 60]);
});
