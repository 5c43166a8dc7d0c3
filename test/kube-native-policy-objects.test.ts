// The entry -> ValidatingAdmissionPolicy/Binding/ConfigMap mapping, judged by
// the API double: its copy of kube-apiserver's validation accepts what the mapping writes, and
// its ValidatingAdmissionPolicy plugin (CEL by @bufbuild/cel, not the server's library) then
// decides writes as the entry's webhook would: denied, warned, the own namespace excluded.
import t from 'tap';
import { createWebhookAdmission } from '../local-cluster/admission-caller/index.js';
import { startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import { validatingPolicyObjects as nativePolicyObjects, type NativeInput } from '../src/registration/native-policy-objects.js';
import { nativeObstacles } from '../src/policy/engine.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { PolicyEntry } from '../src/policy/policy.js';
import { policyText } from './support/policy/policy-text.js';

const POLICY = policyText(`  - name: max-replicas
    kind: cel
    rules:
      - { operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    params:
      data: { maxReplicas: "3" }
    variables:
      - { name: replicas, expression: "object.spec.replicas" }
    validations:
      - expression: "variables.replicas <= int(params.data.maxReplicas)"
        messageExpression: "'replicas ' + string(variables.replicas) + ' exceed ' + params.data.maxReplicas"
        reason: Forbidden
  - name: owner-label
    kind: cel
    mode: warn
    rules:
      - { operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    matchConditions:
      - { name: not-system, expression: "!('system' in object.metadata.labels)" }
    validations:
      - { expression: "has(object.metadata.labels.owner)", message: "deployments need an owner label" }
  - name: deny-privileged
    kind: denyPrivileged
  - name: structured-params
    kind: cel
    rules:
      - { operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }
    params: { max: 3 }
    validations:
      - { expression: "params.max > 0" }
`);

const loaded = parsePolicy(POLICY, 'policy.yaml', { ownNamespace: 'admission' });
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const entry = (name: string): PolicyEntry => loaded.policy.entries.find((e) => e.spec.name === name)!;
const INPUT: NativeInput = { configName: 'kube-admission-server', namespace: 'admission', excludedNamespaces: ['kube-system'], owner: { name: 'kube-admission-server', uid: 'owner-uid' } };

t.test('which entries can run natively, and why not', async (t) => {
  t.same(nativeObstacles(entry('max-replicas')), []);
  t.same(nativeObstacles(entry('owner-label')), []);
  t.match(nativeObstacles(entry('deny-privileged')), [/kind denyPrivileged is built into this server/]);
  t.match(nativeObstacles(entry('structured-params')), [/params are not a ConfigMap's string data/]);
  t.throws(() => nativePolicyObjects(entry('deny-privileged'), INPUT), /cannot run natively/);
});

t.test('the mapped objects: names, params ConfigMap, actions from the mode, owner', async (t) => {
  const { policy, binding, params } = nativePolicyObjects(entry('max-replicas'), INPUT);
  t.equal(policy.metadata?.name, 'kube-admission-server-max-replicas');
  t.same(policy.spec?.paramKind, { apiVersion: 'v1', kind: 'ConfigMap' });
  t.same(binding.spec?.paramRef, { name: 'kube-admission-server-max-replicas-params', namespace: 'admission', parameterNotFoundAction: 'Deny' });
  t.same(binding.spec?.validationActions, ['Deny'], 'enforce maps to Deny');
  t.same(params?.data, { maxReplicas: '3' });
  t.equal(params?.metadata?.namespace, 'admission');
  t.same(policy.metadata?.ownerReferences, [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'kube-admission-server', uid: 'owner-uid' }]);
  t.same(policy.metadata?.labels, { 'app.kubernetes.io/managed-by': 'kube-admission-server', 'kube-admission-server.io/configuration': 'kube-admission-server' });
  t.same(policy.spec?.matchConstraints?.namespaceSelector?.matchExpressions, [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['admission', 'kube-system'] }]);
  const warn = nativePolicyObjects(entry('owner-label'), INPUT);
  t.same(warn.binding.spec?.validationActions, ['Warn'], 'warn maps to Warn');
  t.notOk(warn.params, 'no params, no ConfigMap');
  t.notOk(warn.binding.spec?.paramRef);
  t.same(warn.policy.spec?.matchConditions, [{ name: 'not-system', expression: "!('system' in object.metadata.labels)" }]);
});

t.test('the double accepts the objects as written and enforces them like the webhook', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['admission', 'team-a'] });
  const admission = createWebhookAdmission({ store: api.store, resolveService: () => {
    throw new Error('no webhook is registered here');
  } });
  api.setAdmission(admission.admission);
  t.teardown(async () => {
    admission.close();
    await api.close();
  });
  const post = (path: string, body: unknown) => rawRequest(api, 'POST', path, { body });
  const ARS = '/apis/admissionregistration.k8s.io/v1';
  for (const name of ['max-replicas', 'owner-label']) {
    const { policy, binding, params } = nativePolicyObjects(entry(name), INPUT);
    if (params) t.equal((await post('/api/v1/namespaces/admission/configmaps', params)).status, 201);
    const created = await post(`${ARS}/validatingadmissionpolicies`, policy);
    t.equal(created.status, 201, `${name}: ${created.text}`);
    t.same((created.json as KubeObject).spec, policy.spec, `${name}: every default already written out (a read-back compares equal)`);
    const bound = await post(`${ARS}/validatingadmissionpolicybindings`, binding);
    t.equal(bound.status, 201, `${name}: ${bound.text}`);
    t.same((bound.json as KubeObject).spec, binding.spec);
  }
  const deployment = (name: string, replicas: number, labels: Record<string, string> = { owner: 'team-a' }): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } } },
  });
  const denied = await post('/apis/apps/v1/namespaces/team-a/deployments', deployment('big', 5));
  t.equal(denied.status, 403);
  t.equal(
    (denied.json as { message: string }).message,
    `deployments.apps "big" is forbidden: ValidatingAdmissionPolicy 'kube-admission-server-max-replicas' with binding 'kube-admission-server-max-replicas' denied request: replicas 5 exceed 3`,
  );
  t.equal((await post('/apis/apps/v1/namespaces/admission/deployments', deployment('own', 5))).status, 201, 'the server\'s own namespace is not intercepted');
  const warned = await post('/apis/apps/v1/namespaces/team-a/deployments', deployment('unowned', 1, {}));
  t.equal(warned.status, 201);
  t.match(String(warned.headers.warning), "Validation failed for ValidatingAdmissionPolicy 'kube-admission-server-owner-label' with binding 'kube-admission-server-owner-label': deployments need an owner label");
});
