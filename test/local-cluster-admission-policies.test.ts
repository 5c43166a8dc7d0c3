// ValidatingAdmissionPolicies in the double, as kube-apiserver runs them: stored with its
// validation and defaults, evaluated on writes (CEL by @bufbuild/cel, not the server's library)
// after the mutating webhooks and before the validating webhooks; Deny/Warn/Audit, failurePolicy,
// matchConditions, paramRef to a ConfigMap, messageExpression; status written by the
// kube-controller-manager's status controller. kubectl shows what a user sees.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { register, webhookEntry } from '../local-cluster/admission-caller/fixtures.js';
import { ClusterClient } from '../local-cluster/cluster/api-client.js';
import { ControllerManager } from '../local-cluster/cluster/controller-manager.js';
import { startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { allow, jsonPatchResponse } from '../local-cluster/fake-apiserver/webhook-server.js';
import { serveHookAsService, startAdmissionWorld } from './support/kube/admission-world.js';
import { describeResult, kubectlMissing, runShell } from './support/tools/kubectl.js';

const world = await startAdmissionWorld(t, ['webhooks', 'team-a', 'team-b'], 'admission-policies-');
const { api, hook, dir, admission, kubectlEnv: env } = world;
api.store.createNamespace('team-b', { tier: 'free' });

const ADMIN = new ClusterClient(api, { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] });
const POLICY_RESOURCES = ['validatingadmissionpolicybindings', 'validatingadmissionpolicies', 'validatingwebhookconfigurations', 'mutatingwebhookconfigurations'];
const clear = (): void => {
  for (const resource of POLICY_RESOURCES) for (const o of api.store.list(resource)) api.store.delete(resource, undefined, o.metadata?.name ?? '');
  for (const o of api.store.list('deployments', 'team-a')) api.store.delete('deployments', 'team-a', o.metadata?.name ?? '');
  hook.received.length = 0;
};

const policy = (name: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicy',
  metadata: { name },
  spec: {
    matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }] },
    ...spec,
  },
});
const binding = (name: string, policyName: string, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  metadata: { name },
  spec: { policyName, validationActions: ['Deny'], ...spec },
});
const deployment = (name: string, replicas: number, labels: Record<string, string> = { app: name }): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
});
const MAX_REPLICAS = policy('max-replicas', {
  paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
  validations: [
    {
      expression: 'object.spec.replicas <= int(params.data.maxReplicas)',
      messageExpression: "'replicas ' + string(object.spec.replicas) + ' exceed ' + params.data.maxReplicas",
      reason: 'Forbidden',
    },
  ],
});

async function kubectlApply(objects: KubeObject[], namespace = 'team-a'): Promise<Awaited<ReturnType<typeof runShell>>> {
  const file = join(dir, `objects-${Date.now()}-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
  return runShell(`kubectl apply -n ${namespace} -f ${file}`, { cwd: dir, env, timeoutMs: 60_000 });
}

async function create(resource: string, object: KubeObject, namespace?: string): Promise<{ status: number; json: unknown; headers: Record<string, unknown> }> {
  const type = api.store.types.get(resource);
  const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const path = namespace ? `${prefix}/namespaces/${namespace}/${type.resource}` : `${prefix}/${type.resource}`;
  const reply = await rawRequest(api, 'POST', path, { body: object });
  return { status: reply.status, json: reply.json, headers: reply.headers as Record<string, unknown> };
}

t.test('the API stores policies and bindings with defaults and refuses invalid ones with kube-apiserver texts', async (t) => {
  clear();
  const created = await create('validatingadmissionpolicies', MAX_REPLICAS);
  t.equal(created.status, 201, JSON.stringify(created.json));
  const stored = api.store.get('validatingadmissionpolicies', undefined, 'max-replicas');
  const spec = stored?.spec as { failurePolicy: string; matchConstraints: { namespaceSelector: unknown; matchPolicy: string; resourceRules: Array<{ scope: string }> } };
  t.equal(spec.failurePolicy, 'Fail', 'failurePolicy defaults to Fail');
  t.same(spec.matchConstraints.namespaceSelector, {}, 'selectors default to empty');
  t.equal(spec.matchConstraints.matchPolicy, 'Equivalent');
  t.equal(spec.matchConstraints.resourceRules[0]?.scope, '*');
  t.equal(stored?.metadata?.generation, 1);

  const both = await create('validatingadmissionpolicybindings', binding('b', 'max-replicas', { validationActions: ['Deny', 'Warn'] }));
  t.equal(both.status, 422);
  t.match((both.json as { message: string }).message, 'spec.validationActions: Invalid value: ["Deny","Warn"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)');
  const noRef = await create('validatingadmissionpolicybindings', binding('b', 'max-replicas', { paramRef: { name: 'limits' } }));
  t.match((noRef.json as { message: string }).message, 'spec.paramRef.parameterNotFoundAction: Required value');
  const empty = await create('validatingadmissionpolicies', policy('empty', {}));
  t.match((empty.json as { message: string }).message, 'spec.validations: Required value: validations or auditAnnotations must contain at least one item');
  const badCel = await create('validatingadmissionpolicies', policy('bad-cel', { validations: [{ expression: 'object.spec.replicas <' }] }));
  t.equal(badCel.status, 422);
  t.match((badCel.json as { message: string }).message, /spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <": compilation failed: ERROR: <input>:1:\d+/);
  const noRules = await create('validatingadmissionpolicies', { ...policy('no-rules', { validations: [{ expression: 'true' }] }), spec: { matchConstraints: {}, validations: [{ expression: 'true' }] } });
  t.match((noRules.json as { message: string }).message, 'spec.matchConstraints.resourceRules: Required value');
});

t.test('a write denied by a policy whose binding takes its params from a ConfigMap (kubectl)', async (t) => {
  const missing = kubectlMissing();
  if (missing) return t.fail(missing);
  clear();
  api.store.put('configmaps', { metadata: { name: 'limits', namespace: 'team-a' }, data: { maxReplicas: '3' } });
  const setup = await kubectlApply([MAX_REPLICAS, binding('max-replicas-team-a', 'max-replicas', { paramRef: { name: 'limits', namespace: 'team-a', parameterNotFoundAction: 'Deny' } })]);
  t.equal(setup.code, 0, describeResult(setup));
  const denied = await kubectlApply([deployment('big', 5)]);
  t.not(denied.code, 0);
  t.match(
    denied.stderr,
    `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-team-a' denied request: replicas 5 exceed 3`,
    describeResult(denied),
  );
  t.notOk(api.store.get('deployments', 'team-a', 'big'), 'nothing stored');
  const allowed = await kubectlApply([deployment('small', 2)]);
  t.equal(allowed.code, 0, describeResult(allowed));
  const raw = await create('deployments', deployment('raw', 4), 'team-a');
  t.equal(raw.status, 403, 'reason Forbidden is answered with 403');
  t.match(raw.json, { reason: 'Forbidden', details: { name: 'raw', group: 'apps', kind: 'deployments', causes: [{ message: /replicas 4 exceed 3$/ }] } });
  const printed = await runShell('kubectl get validatingadmissionpolicybindings', { cwd: dir, env, timeoutMs: 60_000 });
  t.match(printed.stdout, /max-replicas-team-a\s+max-replicas\s+team-a\/limits/, describeResult(printed));
});

t.test('Warn answers with a warning header and Audit records the validation_failure annotation', async (t) => {
  const missing = kubectlMissing();
  if (missing) return t.fail(missing);
  clear();
  api.store.put('configmaps', { metadata: { name: 'limits', namespace: 'team-a' }, data: { maxReplicas: '3' } });
  const setup = await kubectlApply([MAX_REPLICAS, binding('warn-only', 'max-replicas', { validationActions: ['Warn', 'Audit'], paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } })]);
  t.equal(setup.code, 0, describeResult(setup));
  const warned = await kubectlApply([deployment('warned', 7)]);
  t.equal(warned.code, 0, describeResult(warned));
  t.match(warned.stderr, "Warning: Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'warn-only': replicas 7 exceed 3");
  t.ok(api.store.get('deployments', 'team-a', 'warned'), 'stored: Warn does not deny');
  const audit = admission.audits.filter((a) => a.name === 'warned').at(-1);
  const failure = JSON.parse(audit?.annotations['validation.policy.admission.k8s.io/validation_failure'] ?? '[]');
  t.same(failure, [{ message: 'replicas 7 exceed 3', policy: 'max-replicas', binding: 'warn-only', expressionIndex: 0, validationActions: ['Warn', 'Audit'] }]);
});

t.test('params missing: Deny fails the request under failurePolicy Fail, Ignore lets it through', async (t) => {
  clear();
  api.store.delete('configmaps', 'team-a', 'limits');
  await create('validatingadmissionpolicies', MAX_REPLICAS);
  await create('validatingadmissionpolicybindings', binding('needs-params', 'max-replicas', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } }));
  const failed = await create('deployments', deployment('orphan', 1), 'team-a');
  t.equal(failed.status, 422);
  t.match((failed.json as { message: string }).message, "ValidatingAdmissionPolicy 'max-replicas' with binding 'needs-params' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
  const stored = api.store.get('validatingadmissionpolicies', undefined, 'max-replicas')!;
  api.store.update('validatingadmissionpolicies', { ...stored, spec: { ...(stored.spec as object), failurePolicy: 'Ignore' } });
  const ignored = await create('deployments', deployment('orphan', 1), 'team-a');
  t.equal(ignored.status, 201, JSON.stringify(ignored.json));
  api.store.delete('deployments', 'team-a', 'orphan');
  await create('validatingadmissionpolicybindings', binding('allow-missing', 'max-replicas', { paramRef: { name: 'absent', parameterNotFoundAction: 'Allow' } }));
  api.store.delete('validatingadmissionpolicybindings', undefined, 'needs-params');
  const allowed = await create('deployments', deployment('orphan', 9), 'team-a');
  t.equal(allowed.status, 201, 'Allow: no params, the policy does not run');
});

t.test('matchConditions, binding selectors and the default message', async (t) => {
  clear();
  await create('validatingadmissionpolicies', policy('needs-owner', {
    matchConditions: [{ name: 'not-system', expression: "!('system' in object.metadata.labels)" }],
    validations: [{ expression: "has(object.metadata.labels.owner)" }],
  }));
  await create('validatingadmissionpolicybindings', binding('free-tier', 'needs-owner', { matchResources: { namespaceSelector: { matchLabels: { tier: 'free' } } } }));
  const denied = await create('deployments', deployment('web', 1), 'team-b');
  t.equal(denied.status, 422);
  t.match((denied.json as { message: string }).message, "denied request: failed expression: has(object.metadata.labels.owner)");
  t.equal((await create('deployments', deployment('sys', 1, { app: 'sys', system: 'yes' }), 'team-b')).status, 201, 'a false matchCondition skips the policy');
  t.equal((await create('deployments', deployment('web', 1), 'team-a')).status, 201, 'the binding selects namespaces by label');
});

t.test('order: mutating webhooks first, then policies, then validating webhooks (which a denial never reaches)', async (t) => {
  clear();
  await serveHookAsService(world);
  const entry = (name: string, path: string): Record<string, unknown> =>
    webhookEntry(name, hook.caBundle, { clientConfig: { service: { name: 'hook', namespace: 'webhooks', path, port: 443 }, caBundle: hook.caBundle }, rules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'] }] });
  await register(api, 'mutating', 'm', [entry('owner.example.com', '/mutate')]);
  await register(api, 'validating', 'v', [entry('check.example.com', '/validate')]);
  world.respond = (received) => (received.path.startsWith('/mutate') ? jsonPatchResponse(received, [{ op: 'add', path: '/metadata/labels/owner', value: 'platform' }]) : allow(received));
  await create('validatingadmissionpolicies', policy('needs-owner', { validations: [{ expression: "has(object.metadata.labels.owner) && object.spec.replicas < 10" }] }));
  await create('validatingadmissionpolicybindings', binding('everywhere', 'needs-owner'));
  t.equal((await create('deployments', deployment('patched', 1), 'team-a')).status, 201, 'the policy sees the mutating webhook\'s label');
  t.same(hook.received.map((r) => r.path.split('?')[0]), ['/mutate', '/validate']);
  hook.received.length = 0;
  const denied = await create('deployments', deployment('huge', 12), 'team-a');
  t.equal(denied.status, 422);
  t.same(hook.received.map((r) => r.path.split('?')[0]), ['/mutate'], 'the validating webhook is not called after a policy denied');
  world.respond = allow;
});

t.test('the status controller writes observedGeneration and typeChecking; no conditions', async (t) => {
  clear();
  const controllers = new ControllerManager(api, () => undefined);
  controllers.start();
  t.teardown(() => controllers.stop());
  await create('validatingadmissionpolicies', MAX_REPLICAS);
  const observed = await api.store.waitFor('validatingadmissionpolicies', undefined, 'max-replicas', (o) => (o?.status as { observedGeneration?: number } | undefined)?.observedGeneration === 1, { timeoutMs: 10_000 });
  t.same(observed?.status, { observedGeneration: 1, typeChecking: {} });
  const current = ADMIN.get({ resource: 'validatingadmissionpolicies', name: 'max-replicas' })!;
  await ADMIN.update({ resource: 'validatingadmissionpolicies', name: 'max-replicas' }, { ...current, spec: { ...(current.spec as object), failurePolicy: 'Ignore' } });
  const second = await api.store.waitFor('validatingadmissionpolicies', undefined, 'max-replicas', (o) => (o?.status as { observedGeneration?: number } | undefined)?.observedGeneration === 2, { timeoutMs: 10_000 });
  t.equal(second?.metadata?.generation, 2, 'a spec change bumps the generation and the controller follows');
});

t.test('a kube-apiserver older than 1.30 serves no ValidatingAdmissionPolicy v1: 404, and none in discovery', async (t) => {
  for (const [version, served] of [['v1.29.14', false], ['v1.30.0', true]] as const) {
    const old = await startFakeApiServer({ version });
    t.teardown(() => old.close());
    const listed = await rawRequest(old, 'GET', '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies');
    t.equal(listed.status, served ? 200 : 404, `${version}: list`);
    const discovery = await rawRequest(old, 'GET', '/apis/admissionregistration.k8s.io/v1');
    const names = ((discovery.json as { resources: Array<{ name: string }> }).resources ?? []).map((r) => r.name);
    t.equal(names.includes('validatingadmissionpolicybindings'), served, `${version}: discovery`);
    t.ok(names.includes('validatingwebhookconfigurations'));
  }
});
