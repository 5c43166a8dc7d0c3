import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { startFakeApiServer, type FakeApiServer, type RoleLike } from '../local-cluster/fake-apiserver/index.js';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(ROOT, 'policies', 'example.yaml');

const container = (name: string, image: string, extra: Record<string, unknown> = {}) => ({ name, image, ...extra });
const podSpec = (...containers: Record<string, unknown>[]) => ({ containers });

function seed(api: FakeApiServer): void {
  api.store.createNamespace('team-a', { tier: 'prod' });
  api.store.createNamespace('team-b');
  const pod = (namespace: string, name: string, labels: Record<string, string>, spec: Record<string, unknown>) =>
    api.store.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, spec });
  pod('team-a', 'web-1', { app: 'web' }, podSpec(container('web', 'registry.k8s.io/pause:3.10')));
  pod('team-a', 'web-2', { app: 'web' }, podSpec(container('web', 'registry.k8s.io/pause:3.10')));
  pod('team-a', 'root', { app: 'debug' }, podSpec(container('shell', 'registry.k8s.io/busybox', { securityContext: { privileged: true } })));
  pod('team-b', 'nolabel', {}, podSpec(container('c', 'ghcr.io/x/y:1')));
  pod('team-b', 'foreign', { app: 'f' }, podSpec(container('c', 'quay.io/x/y:1')));
  // kube-system is excluded by the policy: its privileged agents are not findings.
  pod('kube-system', 'agent', {}, podSpec(container('c', 'quay.io/cni/agent', { securityContext: { privileged: true } })));
  const template = (labels: Record<string, string>, spec: Record<string, unknown>) => ({ selector: { matchLabels: labels }, template: { metadata: { labels }, spec } });
  api.store.put('deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'shop', namespace: 'team-a', labels: { app: 'shop' } }, spec: template({ app: 'shop' }, { hostNetwork: true, ...podSpec(container('c', 'ghcr.io/shop:2')) }) });
  api.store.put('statefulsets', { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db', namespace: 'team-b', labels: { app: 'db' } }, spec: template({ app: 'db' }, podSpec(container('c', 'ghcr.io/db:1'))) });
  api.store.put('cronjobs', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly', namespace: 'team-b' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: podSpec(container('c', 'ghcr.io/job:1', { securityContext: { privileged: true } })) } } } } });
}

async function auditRole(): Promise<RoleLike> {
  return parse(await readFile(join(ROOT, 'manifests', 'audit', 'clusterrole.yaml'), 'utf8')) as RoleLike;
}

t.test('audit lists what runs, paged and read only under its own ClusterRole, and reports per namespace', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  seed(api);
  api.setRbac({ clusterRoles: [await auditRole()] });
  const dir = await tempDir(t, 'kas-audit-');
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);

  const run = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', EXAMPLE, '--page-size', '2']);
  t.equal(run.code, 1, `something would be denied\n${run.stdout}${run.stderr}`);
  const listed = /^listed: (.*)$/m.exec(run.stdout)?.[1]?.split(', ').sort();
  t.same(listed, ['CronJob', 'DaemonSet', 'Deployment', 'Job', 'Pod', 'ReplicaSet', 'ReplicationController', 'StatefulSet'], 'every kind the rules match that the cluster serves (the double has no PodTemplates)');
  t.match(run.stdout, /^namespace team-a: 4 object\(s\), 2 would be denied, 0 warned, 0 audited$/m);
  t.match(run.stdout, /^ {2}denied Pod\/team-a\/root by deny-privileged: container "shell" sets securityContext.privileged: true/m);
  t.match(run.stdout, /^ {2}denied Deployment\/team-a\/shop by deny-host-namespaces: .*hostNetwork: true/m);
  t.match(run.stdout, /^namespace team-b: 4 object\(s\), 1 would be denied, 2 warned, 1 audited$/m);
  t.match(run.stdout, /^ {2}warn +Pod\/team-b\/nolabel by require-app-label: require-app-label: Pod "nolabel" is missing label "app"$/m);
  t.match(run.stdout, /^ {2}audit +Pod\/team-b\/foreign by allowed-registries: .*quay.io\/x\/y:1/m);
  t.match(run.stdout, /^ {2}denied CronJob\/team-b\/nightly by deny-privileged/m);
  t.match(run.stdout, /^namespace kube-system: 1 object\(s\), 0 would be denied, 0 warned, 0 audited$/m);

  const requests = api.requests;
  t.same(requests.filter((r) => r.status === 403), [], 'nothing outside the audit ClusterRole');
  t.ok(requests.every((r) => r.method === 'GET'), 'read only');
  t.ok(requests.every((r) => r.verb === 'list' || r.verb === undefined), 'list calls, and discovery (no resource)');
  t.equal(requests.filter((r) => r.resource === 'pods').length, 3, 'six Pods, two per page: three list calls');
});

t.test('audit --output json; a denied list call or no cluster is exit 2 with the reason', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  seed(api);
  const dir = await tempDir(t, 'kas-audit-');
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);
  const json = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', EXAMPLE, '-o', 'json']);
  const report = JSON.parse(json.stdout) as { namespaces: { namespace: string; denied: number; findings: { resource: string }[] }[] };
  t.same(report.namespaces.map((n) => [n.namespace, n.denied]), [['kube-system', 0], ['team-a', 2], ['team-b', 1]]);

  // The server's own ClusterRole may not list Pods: audit needs the separate one.
  const serverRole = parse(await readFile(join(ROOT, 'manifests', 'base', 'clusterrole.yaml'), 'utf8')) as RoleLike;
  api.setRbac({ clusterRoles: [serverRole] });
  const refused = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', EXAMPLE]);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /cannot list Namespaces: GET \/api\/v1\/namespaces\?limit=500: 403: .*forbidden/i);
  const noCluster = await runToolInProcess(['audit', '--policy-file', EXAMPLE]);
  t.equal(noCluster.code, 2);
  t.match(noCluster.stderr, /audit needs a cluster/);
});

const SERVICES_POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: no-node-ports
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [services] }]
    validations:
      - expression: "object.spec.type != 'NodePort'"
        messageExpression: "'service ' + object.metadata.name + ' is a NodePort'"
  - name: owned-cluster-roles
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [rbac.authorization.k8s.io], apiVersions: ["*"], resources: [clusterroles], scope: Cluster }]
    validations:
      - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
        message: cluster roles need an owner label
`;

t.test('audit lists every kind the rules match (discovery, then paged lists), cluster-scoped ones too, under the ClusterRole it prints', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.store.createNamespace('shop');
  for (let i = 0; i < 5; i++) {
    api.store.put('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: `svc-${i}`, namespace: 'shop' }, spec: { type: i === 3 ? 'NodePort' : 'ClusterIP', ports: [{ port: 80 }] } });
  }
  api.store.put('clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'orphan' }, rules: [] });
  api.store.put('clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'owned', labels: { owner: 'team' } }, rules: [] });
  const dir = await tempDir(t, 'kas-audit-');
  const kubeconfig = join(dir, 'kubeconfig');
  const policy = join(dir, 'policy.yaml');
  await api.writeKubeconfig(kubeconfig);
  await writeFile(policy, SERVICES_POLICY);

  const printed = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '--print-cluster-role']);
  t.equal(printed.code, 0, printed.stderr);
  const role = parse(printed.stdout) as RoleLike & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
  t.same(role.rules, [
    { apiGroups: [''], resources: ['namespaces', 'services'], verbs: ['list'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['list'] },
  ], 'list on what the rules match and on namespaces, nothing else');

  api.setRbac({ clusterRoles: [role] });
  const run = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '--page-size', '2']);
  t.equal(run.code, 1, run.stdout + run.stderr);
  t.match(run.stdout, /^listed: Service, ClusterRole$/m);
  t.match(run.stdout, /^namespace shop: 5 object\(s\), 1 would be denied/m);
  t.match(run.stdout, /^ {2}denied Service\/shop\/svc-3 by no-node-ports: service svc-3 is a NodePort$/m);
  t.match(run.stdout, /^namespace \(cluster\): 2 object\(s\), 1 would be denied/m, 'cluster-scoped objects, with no namespace');
  t.match(run.stdout, /^ {2}denied ClusterRole\/orphan by owned-cluster-roles: cluster roles need an owner label$/m);
  t.same(api.requests.filter((r) => r.status === 403), [], 'the printed ClusterRole is enough');
  t.equal(api.requests.filter((r) => r.resource === 'services' && r.verb === 'list').length, 3, 'five Services, two per page');

  api.setRbac({ clusterRoles: [{ ...role, rules: role.rules.slice(0, 1) }] });
  const refused = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy]);
  t.equal(refused.code, 2);
  t.match(refused.stderr, /cannot list ClusterRoles: .*403.*; kube-admission-server audit --print-cluster-role prints the ClusterRole it needs/);
});

t.test('audit keeps the first findings per namespace and webhook and counts the rest, so memory stays flat', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  api.store.createNamespace('shop');
  for (let i = 0; i < 25; i++) api.store.put('services', { apiVersion: 'v1', kind: 'Service', metadata: { name: `np-${i}`, namespace: 'shop' }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
  const dir = await tempDir(t, 'kas-audit-');
  const kubeconfig = join(dir, 'kubeconfig');
  const policy = join(dir, 'policy.yaml');
  await api.writeKubeconfig(kubeconfig);
  await writeFile(policy, SERVICES_POLICY);
  const run = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '--page-size', '7']);
  t.equal(run.code, 1);
  t.match(run.stdout, /^namespace shop: 25 object\(s\), 25 would be denied/m, 'every object counted');
  t.equal(run.stdout.match(/^ {2}denied Service\/shop\//gm)?.length, 20, 'the first 20 findings shown');
  t.match(run.stdout, /^ {2}\.\.\. and 5 more by no-node-ports \(the first 20 are shown\)$/m);
});

interface AuditReport {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string }[] };
  summary: Record<string, number>;
  results: { policy: string; result: string; message?: string; severity?: string; category?: string; resources: { kind: string; name: string; namespace?: string; uid: string }[] }[];
}

t.test('audit -o report: the report objects, one result per object and reported rule, split under --reports-max-bytes', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  seed(api);
  const dir = await tempDir(t, 'kas-audit-');
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);
  const owner = api.store.put('clusterroles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'kas' }, rules: [] });
  const policy = join(dir, 'policy.yaml');
  await writeFile(
    policy,
    (await readFile(EXAMPLE, 'utf8')).replace('  - name: deny-privileged\n    kind: denyPrivileged\n', '  - name: deny-privileged\n    kind: denyPrivileged\n    severity: high\n    category: Pod Security\n').replace('  - name: allowed-registries\n    kind: allowedRegistries\n', '  - name: allowed-registries\n    kind: allowedRegistries\n    report: false\n'),
  );
  const run = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '-o', 'report', '--config-name', 'kas', '--owner-cluster-role', 'kas']);
  t.equal(run.code, 1, run.stderr);
  const reports = parseAllDocuments(run.stdout).map((d) => d.toJSON() as AuditReport);
  t.same(reports.map((r) => [r.kind, r.metadata.namespace ?? '', r.metadata.name]), [
    ['Report', 'team-a', 'kas'],
    ['Report', 'team-b', 'kas'],
  ], 'a Report per namespace with results; kube-system is excluded, so none there');
  for (const report of reports) {
    t.equal(report.apiVersion, 'openreports.io/v1alpha1');
    t.same(report.metadata.labels, { 'app.kubernetes.io/managed-by': 'kube-admission-server', 'kube-admission-server.io/install': 'kas' });
    t.same(report.metadata.ownerReferences, [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'kas', uid: owner.metadata?.uid }]);
  }
  const teamA = reports[0]!;
  const byObject = (name: string) => teamA.results.filter((r) => r.resources[0]?.name === name).map((r) => [r.policy, r.result]);
  t.same(byObject('root'), [['require-app-label', 'pass'], ['deny-privileged', 'fail'], ['deny-host-namespaces', 'pass']], 'every reported rule that matches, in the policy order; allowed-registries is not reported');
  t.same(byObject('shop'), [['require-app-label', 'pass'], ['deny-privileged', 'pass'], ['deny-host-namespaces', 'fail']]);
  t.match(teamA.results.find((r) => r.resources[0]?.name === 'root' && r.policy === 'deny-privileged'), { severity: 'high', category: 'Pod Security', message: /container "shell" sets securityContext.privileged: true/, resources: [{ kind: 'Pod', name: 'root', namespace: 'team-a', uid: api.store.get('pods', 'team-a', 'root')?.metadata?.uid }] });
  const teamB = reports[1]!;
  t.match(teamB.results.find((r) => r.resources[0]?.name === 'nolabel' && r.policy === 'require-app-label'), { result: 'warn', message: 'require-app-label: Pod "nolabel" is missing label "app"' });
  t.same(teamB.summary, { pass: teamB.results.filter((r) => r.result === 'pass').length, fail: 1, warn: 2, error: 0, skip: 0 });

  // A small limit splits each namespace's results; every body stays under it.
  const small = await runToolInProcess(['audit', '--kubeconfig', kubeconfig, '--policy-file', policy, '-o', 'report', '--config-name', 'kas', '--reports-max-bytes', '4Ki', '--reports-api', 'wgpolicyk8s']);
  const split = parseAllDocuments(small.stdout).map((d) => d.toJSON() as AuditReport);
  t.ok(split.length > reports.length, `${split.length} reports`);
  t.ok(split.every((r) => r.kind === 'PolicyReport' && Buffer.byteLength(JSON.stringify(r)) <= 4096));
  t.equal(split.reduce((n, r) => n + r.results.length, 0), reports.reduce((n, r) => n + r.results.length, 0), 'the same results');
});
