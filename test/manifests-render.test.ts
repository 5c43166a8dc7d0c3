import t from 'tap';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePolicy } from '../src/policy/policy-file.js';
import { renderKustomization } from './support/manifests/kustomize.js';
import { renderHelmChart } from './support/manifests/helm.js';
import { chartDir, renderInstalls } from './support/manifests/installs.js';
import { findTool, requireTool } from './support/tools/tools.js';
import { cacheFile, cachedRender, renderKey } from './support/manifests/render-cache.js';
import { findObject, type KubeObject } from '../local-cluster/util/kube-object.js';
import { schemaProblems } from './support/manifests/schema-validation.js';
import { hasFieldList, unknownFields } from '../local-cluster/util/strict-fields.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NAMESPACE = 'kube-admission-server';
const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

const BASE_OBJECTS = [
  'Namespace/kube-admission-server',
  'ServiceAccount/kube-admission-server',
  'ClusterRole/kube-admission-server',
  'ClusterRoleBinding/kube-admission-server',
  'Role/kube-admission-server',
  'RoleBinding/kube-admission-server',
  'ConfigMap/kube-admission-server-policy',
  'Deployment/kube-admission-server',
  'Service/kube-admission-server',
  'PodDisruptionBudget/kube-admission-server',
];

const EXPECTED_OBJECTS: Record<string, string[]> = {
  base: BASE_OBJECTS,
  'cert-manager': [
    ...BASE_OBJECTS,
    'Issuer/kube-admission-server-selfsigned',
    'Issuer/kube-admission-server-ca',
    'Certificate/kube-admission-server-ca',
    'Certificate/kube-admission-server-serving-cert',
  ],
  'single-replica': BASE_OBJECTS.filter((o) => !o.startsWith('PodDisruptionBudget/')),
  'custom-handlers': [
    ...BASE_OBJECTS,
    'ClusterRole/kube-admission-server-handlers',
    'ClusterRoleBinding/kube-admission-server-handlers',
    'Role/kube-admission-server-handlers',
    'RoleBinding/kube-admission-server-handlers',
  ],
};
/** Objects outside the server's namespace: the handlers' grants in the namespaces they are for. */
const OWN_NAMESPACE: Record<string, string> = { 'Role/kube-admission-server-handlers': 'platform', 'RoleBinding/kube-admission-server-handlers': 'platform' };
// The chart installs into the release namespace and does not own it (namespace.create: false).
const chartObjects = (kustomization: string) => (EXPECTED_OBJECTS[kustomization] ?? []).filter((o) => !o.startsWith('Namespace/'));

const ids = (objects: readonly KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();

t.test('every install renders and every object validates against the upstream schemas', async (t) => {
  const installs = await renderInstalls(ROOT);
  t.same(installs.filter((i) => i.tool === 'kustomize').map((i) => i.name), Object.keys(EXPECTED_OBJECTS).sort(), 'every kustomization has its expected object list here');
  t.ok(installs.some((i) => i.tool === 'helm'), 'and the chart is rendered too');
  for (const { name, counterpart, objects } of installs) {
    const expected = counterpart === undefined ? (EXPECTED_OBJECTS[name] ?? []) : chartObjects(counterpart);
    t.same(ids(objects), [...expected].sort(), `${name}: exactly the expected objects`);
    t.same(objects.flatMap(schemaProblems), [], `${name}: all ${objects.length} objects are schema-valid`);
    // Built-in types also get the strict field check kubectl apply asks kube-apiserver for. The
    // cert-manager CRDs have no generated field list here; their schemas check types and required fields.
    const builtIn = objects.filter((o) => o.apiVersion !== 'cert-manager.io/v1');
    t.ok(builtIn.every(hasFieldList), `${name}: every built-in type has a field list`);
    t.same(builtIn.flatMap((o) => unknownFields(o).map((f) => `${o.kind}/${o.metadata.name}: ${f}`)), [], `${name}: no unknown fields`);
    for (const object of objects) {
      const expectedNamespace = CLUSTER_SCOPED.has(object.kind) ? undefined : (OWN_NAMESPACE[`${object.kind}/${object.metadata.name}`] ?? NAMESPACE);
      t.equal(object.metadata.namespace, expectedNamespace, `${name}: ${object.kind}/${object.metadata.name} namespace`);
    }
    // Registrations and key material are made at runtime, never shipped.
    t.notOk(objects.some((o) => /WebhookConfiguration$/.test(o.kind) || o.kind === 'Secret'), `${name}: no webhook configuration or Secret in the manifests`);
  }
});

t.test('the schema check rejects what kube-apiserver would reject', async (t) => {
  const deployment: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'broken' },
    spec: { replicas: 'two', selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c' }] } } },
  };
  t.match(schemaProblems(deployment).join('\n'), /replicas must be integer/, 'a wrongly typed field');

  const pdb: KubeObject = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'x' }, spec: { unhealthyPodEvictionPolicy: 'Sometimes' } };
  t.match(schemaProblems(pdb).join('\n'), /unhealthyPodEvictionPolicy/, 'a value outside an enum');

  const certificate: KubeObject = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', metadata: { name: 'x' }, spec: { dnsNames: ['a'] } };
  t.match(schemaProblems(certificate).join('\n'), /must have required property/, 'cert-manager CRD schema: required fields');

  const typo: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'typo', labelz: {} } as KubeObject['metadata'],
    spec: { template: { spec: { containers: [{ name: 'c', securityContext: { readOnlyRootFileSystem: true } }], volumes: [{ name: 'v', configMap: { name: 'x', subpath: 'y' } }] } } },
  };
  t.same(
    unknownFields(typo),
    ['metadata.labelz', 'spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem', 'spec.template.spec.volumes[0].configMap.subpath'],
    'misspelt fields are found at any depth',
  );

  const unknown: KubeObject = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
  t.match(schemaProblems(unknown).join('\n'), /no schema known/, 'a type without a schema is a problem, not a pass');
});

t.test('the policy ConfigMap carries manifests/base/policy.yaml under a stable name', async (t) => {
  const objects = await renderKustomization(join(ROOT, 'manifests', 'base'));
  const configMap = findObject(objects, 'ConfigMap', 'kube-admission-server-policy');
  const data = configMap['data'] as Record<string, string>;
  t.same(Object.keys(data), ['policy.yaml']);
  t.equal(data['policy.yaml'], await readFile(join(ROOT, 'manifests', 'base', 'policy.yaml'), 'utf8'));
  const loaded = parsePolicy(data['policy.yaml']!, 'manifests/base/policy.yaml');
  if (!loaded.ok) return t.fail(`the shipped policy is invalid:\n${loaded.errors.join('\n')}`);
  t.same(
    loaded.policy.entries.map((e) => [e.spec.name, e.kind, e.mode, e.spec.failurePolicy]),
    [
      ['require-app-label', 'requireLabels', 'warn', 'Ignore'],
      ['deny-privileged', 'denyPrivileged', 'warn', 'Ignore'],
    ],
    'a safe default: no rule denies, and none can block through a failed call',
  );
});

t.test('render failures are reported, never an empty result', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'kas-kubectl-'));
  t.teardown(() => rm(scratch, { recursive: true, force: true }));

  await t.rejects(renderKustomization(join(ROOT, 'manifests', 'base'), { kubectlPath: join(scratch, 'no-kubectl') }), {
    message: /no-kubectl not found: rendering the manifests needs kubectl/,
  });

  await t.rejects(renderKustomization(join(scratch, 'missing')), { message: /kubectl kustomize .*missing failed: .+/ });

  // A kubectl that hangs is killed at the deadline.
  const hanging = join(scratch, 'hanging-kubectl');
  await writeFile(hanging, '#!/bin/sh\nexec sleep 30\n');
  await chmod(hanging, 0o755);
  const started = Date.now();
  await t.rejects(renderKustomization(ROOT, { kubectlPath: hanging, timeoutMs: 300 }), { message: /did not finish within 300 ms/ });
  t.ok(Date.now() - started < 10_000, 'the deadline ends the wait');

  await t.rejects(renderHelmChart(chartDir(ROOT), { releaseName: 'x', namespace: 'y', helmPath: join(scratch, 'no-helm') }), {
    message: /no-helm not found: rendering the chart needs helm/,
  });
  await t.rejects(renderHelmChart(join(scratch, 'missing-chart'), { releaseName: 'x', namespace: 'y' }), { message: /helm template .*missing-chart failed: .+/ });
});

t.test('a missing kubectl or helm fails with the command that installs it', async (t) => {
  const empty = await mkdtemp(join(tmpdir(), 'kas-no-tools-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  for (const tool of ['kubectl', 'helm']) {
    t.throws(() => requireTool(tool, { localDir: empty, searchPath: empty }), { message: new RegExp(`^${tool} not found in .* or on PATH: run \`npm run setup\``) });
  }
  const local = join(empty, 'kubectl');
  await writeFile(local, '#!/bin/sh\n');
  await chmod(local, 0o755);
  t.equal(requireTool('kubectl', { localDir: empty, searchPath: '/usr/bin' }), local, 'the project-local copy comes before PATH');
  t.equal(findTool('helm', { localDir: empty, searchPath: empty }), undefined);
});

t.test('the render cache misses whenever an input changes', async (t) => {
  const tree = await mkdtemp(join(tmpdir(), 'kas-render-key-'));
  t.teardown(() => rm(tree, { recursive: true, force: true }));
  await writeFile(join(tree, 'a.yaml'), 'a: 1\n');
  const tool = join(tree, 'a.yaml');
  const first = await renderKey([tree], [tool], { values: 1 });
  t.equal(await renderKey([tree], [tool], { values: 1 }), first, 'the same inputs, the same key');
  t.not(await renderKey([tree], [tool], { values: 2 }), first, 'other parameters');
  await writeFile(join(tree, 'b.yaml'), '');
  const withFile = await renderKey([tree], [tool], { values: 1 });
  t.not(withFile, first, 'a new file');
  await writeFile(join(tree, 'b.yaml'), 'x');
  t.not(await renderKey([tree], [tool], { values: 1 }), withFile, 'a changed file');

  const key = `test-${process.pid}-${Date.now()}`;
  t.teardown(() => Promise.all([key, `${key}-failing`].map((k) => rm(cacheFile(k), { force: true }))));
  let renders = 0;
  const render = async () => ({ rendered: ++renders });
  t.same(await cachedRender(key, render), { rendered: 1 });
  t.same(await cachedRender(key, render), { rendered: 1 }, 'a hit does not render again');
  await t.rejects(cachedRender(`${key}-failing`, () => Promise.reject(new Error('render failed'))), { message: 'render failed' });
  t.same(await cachedRender(`${key}-failing`, render), { rendered: 2 }, 'a failure is not stored');
});
