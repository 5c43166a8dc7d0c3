// The background audit with the compiled server against the API double (three kube-apiservers,
// the shipped report CRDs): the leader writes reports as OpenReports objects, a violating
// Deployment appears in its namespace's report and leaves it when fixed within the bound, nothing
// is written while nothing changes (the double's own count of write requests), a new leader
// resumes from what is stored without writing, and `audit -o report` prints what is stored.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { parseAllDocuments } from 'yaml';
import { ClusterHarness, NAME } from './support/kube/cluster-harness.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { chartRbacWithReports, CLUSTER_REPORTS, deployment, installReportCrds, metricValue, POLICY_REPORTS, REPORTS, REPORTS_POLICY, reportsHold, reportWrites, resultFor, storedReports } from './support/kube/reports-e2e.js';

/** The goal the issue sets: a violating object's result in its report within 10 s. */
const RESULT_BOUND_MS = 10_000;

async function policyFile(t: { teardown(fn: () => unknown): void }, text = REPORTS_POLICY): Promise<string> {
  const path = join(await tempDir(t, 'kas-reports-'), 'policy.yaml');
  await writeFile(path, text);
  return path;
}

/** Server-side fields of a stored object, dropped to compare it with what was written. */
function written(object: Record<string, unknown>): Record<string, unknown> {
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, generation: _g, managedFields: _m, ...metadata } = object['metadata'] as Record<string, unknown>;
  return { ...object, metadata };
}

t.test('the leader reports what runs; a violation appears and leaves within the bound; no write without a change; a new leader resumes without writing; audit -o report prints what is stored', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b']);
  await installReportCrds(cluster.api);
  const store = cluster.api.store;
  store.createNamespace('team-b');
  store.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } });
  store.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root', namespace: 'team-a' }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', securityContext: { privileged: true } }] } });
  const policy = await policyFile(t);
  const args = ['--policy-file', policy, '--reports', 'objects'];
  const a = await cluster.startReplica(t, 'kas-a', args);
  const first = await a.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
  t.ok(Number(first['reports']) >= 1, `reports written: ${JSON.stringify(first)}`);

  t.match(resultFor(cluster.api, 'team-a', 'Pod', 'root', 'deny-privileged'), { result: 'fail', message: /privileged/, severity: 'high', category: 'Pod Security' });
  t.match(resultFor(cluster.api, 'team-a', 'Pod', 'root', 'require-app-label'), { result: 'warn', message: /missing label "app"/ });
  t.match(resultFor(cluster.api, 'team-a', 'Pod', 'web', 'deny-privileged'), { result: 'pass' });
  t.same(storedReports(cluster.api, 'kas'), [], "the server's own namespace is never audited");
  const [report] = storedReports(cluster.api, 'team-a');
  t.match(report, { apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name: NAME, labels: { 'kube-admission-server.io/install': NAME }, ownerReferences: [{ kind: 'ClusterRole', name: NAME }] }, source: 'kube-admission-server' });

  // audit -o report prints what the server wrote, byte for byte.
  const audit = await runToolInProcess(['audit', '--kubeconfig', cluster.kubeconfig, '--policy-file', policy, '--namespace', 'kas', '-o', 'report', '--owner-cluster-role', NAME]);
  const printed = parseAllDocuments(audit.stdout).map((d) => d.toJSON() as Record<string, unknown>);
  const stored = [...store.list(CLUSTER_REPORTS), ...storedReports(cluster.api, 'team-a'), ...storedReports(cluster.api, 'team-b')].map((o) => written(o as Record<string, unknown>));
  t.equal(printed.length, stored.length, audit.stderr);
  for (const object of printed) {
    const metadata = object['metadata'] as { name: string; namespace?: string };
    const match = stored.find((s) => (s['metadata'] as { name: string; namespace?: string }).name === metadata.name && (s['metadata'] as { namespace?: string }).namespace === metadata.namespace);
    t.equal(JSON.stringify(object), JSON.stringify(match), `${metadata.namespace ?? ''}/${metadata.name}: the same JSON`);
  }

  // A violating Deployment appears within the bound, and leaves its report fixed.
  const createdAt = performance.now();
  store.put('deployments', deployment('shop', 'team-a', true));
  await reportsHold(cluster.api, 'the privileged Deployment in the report', () => resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'deny-privileged')?.result === 'fail', RESULT_BOUND_MS + EVENT_MS);
  const appearedMs = performance.now() - createdAt;
  t.ok(appearedMs <= RESULT_BOUND_MS, `in the report after ${Math.round(appearedMs)} ms`);
  const fixedAt = performance.now();
  store.put('deployments', deployment('shop', 'team-a', false));
  await reportsHold(cluster.api, 'the fixed Deployment passing', () => resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'deny-privileged')?.result === 'pass', RESULT_BOUND_MS + EVENT_MS);
  t.ok(performance.now() - fixedAt <= RESULT_BOUND_MS, `passing after ${Math.round(performance.now() - fixedAt)} ms`);

  // A change that changes no result writes nothing: a relabelled Pod in team-a, then a change that
  // does in team-b; once team-b's report is written, team-a's was never touched.
  const writesBefore = reportWrites(cluster.api);
  store.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } });
  store.put('deployments', deployment('db', 'team-b', true));
  await reportsHold(cluster.api, "team-b's report", () => resultFor(cluster.api, 'team-b', 'Deployment', 'db', 'deny-privileged')?.result === 'fail', RESULT_BOUND_MS + EVENT_MS);
  await cluster.api.waitForRequest((r) => r.resource === 'reports' && r.namespace === 'team-b' && r.endedAt !== undefined, { timeoutMs: EVENT_MS });
  const writes = cluster.api.requests.slice(0).filter((r) => (r.verb === 'create' || r.verb === 'update' || r.verb === 'delete') && r.resource === 'reports');
  t.equal(reportWrites(cluster.api) - writesBefore, 1, `one write: team-b's report (${writes.slice(-2).map((r) => `${r.verb} ${r.namespace}`).join(', ')})`);

  // A new leader: B starts, A leaves (releasing the Lease); B lists, judges, finds every report as stored.
  const b = await cluster.startReplica(t, 'kas-b', args);
  const exit = await a.child.stop('SIGTERM');
  t.equal(exit.code, 0);
  const writesAtHandover = reportWrites(cluster.api);
  const resumed = await b.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
  t.equal(resumed['writes'], 0, 'nothing written: the stored reports are what it would write');
  t.equal(reportWrites(cluster.api), writesAtHandover, 'no write request');
  store.put('deployments', deployment('shop', 'team-a', true));
  await reportsHold(cluster.api, 'the new leader reporting a new violation', () => resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'deny-privileged')?.result === 'fail', RESULT_BOUND_MS + EVENT_MS);
  t.equal((await b.child.stop('SIGTERM')).code, 0);
});

const POLICY_V2 = `apiVersion: kube-admission-server/v1
kind: Policy
excludedNamespaces: [kube-system]
webhooks:
  - name: require-app-label
    kind: requireLabels
    mode: warn
    params:
      labels: [{ key: app, pattern: "web-.*" }]
`;

t.test("under the chart's RBAC: a policy change judges again, a removed entry's results go, many objects split under the limit deterministically, uninstalling removes the reports", async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  await installReportCrds(cluster.api);
  const store = cluster.api.store;
  cluster.api.setRbac(await chartRbacWithReports(REPORTS_POLICY));
  const gc = cluster.api.startGarbageCollector();
  t.teardown(() => gc.stop());
  store.createNamespace('many');
  for (let i = 0; i < 300; i++) {
    store.put('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: `web-${i}`, namespace: 'many', labels: { app: i % 2 === 0 ? `web-${i}` : 'other' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } });
  }
  store.put('deployments', deployment('shop', 'team-a', true));
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': REPORTS_POLICY });
  const limit = 16 * 1024;
  const a = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml'), '--reports', 'objects', '--reports-max-bytes', '16Ki'], { WATCH_POLL_INTERVAL: '500ms' });
  await a.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
  t.same(cluster.api.requests.filter((r) => r.status === 403).map((r) => `${r.verb} ${r.resource}`), [], "nothing the chart's RBAC refuses");

  const many = storedReports(cluster.api, 'many');
  t.ok(many.length >= 5, `300 Pods' results split into ${many.length} reports`);
  for (const report of many) t.ok(Buffer.byteLength(JSON.stringify(report)) <= limit + 512, `${report.metadata?.name}: ${Buffer.byteLength(JSON.stringify(report))} bytes stored (the body written is at most ${limit}; the server adds its metadata)`);
  const resultsPerPod = new Map<string, number>();
  for (const report of many) for (const r of report.results) resultsPerPod.set(r.resources[0]!.name, (resultsPerPod.get(r.resources[0]!.name) ?? 0) + 1);
  t.equal(resultsPerPod.size, 300, 'every Pod');
  t.ok([...resultsPerPod.values()].every((n) => n === 2), 'each once per rule');
  const audit = await runToolInProcess(['audit', '--kubeconfig', cluster.kubeconfig, '--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml'), '--namespace', 'kas', '-o', 'report', '--reports-max-bytes', '16Ki', '--owner-cluster-role', NAME]);
  const printedNames = parseAllDocuments(audit.stdout).map((d) => (d.toJSON() as { metadata: { namespace?: string; name: string } }).metadata).filter((m) => m.namespace === 'many').map((m) => m.name).sort();
  t.same(printedNames, many.map((r) => r.metadata?.name).sort(), 'audit -o report splits them the same way');

  // The policy changes: require-app-label asks for a pattern (judged again), deny-privileged is gone.
  const writesBefore = reportWrites(cluster.api);
  await volume.write({ 'policy.yaml': POLICY_V2 });
  await a.child.waitForMessage('background audit: the policy changed; judging again what it touches', EVENT_MS);
  await reportsHold(
    cluster.api,
    'the reports of the new policy',
    () =>
      resultFor(cluster.api, 'many', 'Pod', 'web-1', 'require-app-label')?.result === 'warn' &&
      resultFor(cluster.api, 'many', 'Pod', 'web-0', 'require-app-label')?.result === 'pass' &&
      storedReports(cluster.api, 'many').every((r) => r.results.every((x) => x.policy !== 'deny-privileged')) &&
      resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'deny-privileged') === undefined,
    EVENT_MS,
  );
  t.ok(reportWrites(cluster.api) > writesBefore, 'rewritten');
  t.match(resultFor(cluster.api, 'many', 'Pod', 'web-1', 'require-app-label'), { message: /does not match/ });

  // Uninstall: the owner ClusterRole goes, and the garbage collector takes every report with it.
  t.equal((await a.child.stop('SIGTERM')).code, 0);
  t.ok(store.list(REPORTS).length > 0);
  store.delete('clusterroles', undefined, NAME);
  await reportsHold(cluster.api, 'no report left', () => store.list(REPORTS).length === 0 && store.list(CLUSTER_REPORTS).length === 0, EVENT_MS);
});

t.test('without the report CRDs: said at start, the violations gauge and Events only; --reports metrics writes no report even where they are served', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const store = cluster.api.store;
  store.put('deployments', deployment('shop', 'team-a', true));
  const eventsOn = (name: string) => store.list('events', 'team-a').filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === name);
  const policy = await policyFile(t);
  const a = await cluster.startReplica(t, 'kas-a', ['--policy-file', policy, '--reports', 'objects', '--reports-events']);
  const said = await a.child.waitForMessage('the report CustomResourceDefinitions are not installed: reporting through metrics and logs only (the chart installs them with reports.installCRDs); looking again every minute', STARTUP_MS);
  t.match(said, { api: 'openreports.io/v1alpha1', kinds: ['Report', 'ClusterReport'] });
  await a.child.waitForMessage('background audit: first scan complete', STARTUP_MS);
  t.equal(await metricValue(a.healthPort, 'kube_admission_policy_violations{rule="deny-privileged",namespace="team-a",result="fail"}'), 1, 'the privileged Deployment');
  t.equal(await metricValue(a.healthPort, 'kube_admission_policy_violations{rule="require-app-label",namespace="team-a",result="fail"}'), undefined, 'nothing else');

  // A new violation after the first scan: an Event on the object, and the gauge follows it.
  store.put('deployments', deployment('db', 'team-a', true));
  await reportsHold(cluster.api, "an Event on db", () => eventsOn('db').length > 0, RESULT_BOUND_MS + EVENT_MS);
  const [event] = eventsOn('db');
  t.match(event, { type: 'Warning', reason: 'PolicyViolation', involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'db', namespace: 'team-a' }, message: /^deny-privileged: .*privileged/, reportingComponent: 'kube-admission-server', reportingInstance: 'kas-a' });
  t.equal(eventsOn('shop').length, 0, 'none for what the first scan found');
  t.equal(await metricValue(a.healthPort, 'kube_admission_policy_violations{rule="deny-privileged",namespace="team-a",result="fail"}'), 2);
  // db deleted, then another violation: the audit judges in order, so once the second Event is
  // there, the deletion was counted before it.
  store.delete('deployments', 'team-a', 'db');
  store.put('deployments', deployment('cache', 'team-a', true));
  await reportsHold(cluster.api, 'an Event on cache', () => eventsOn('cache').length > 0, RESULT_BOUND_MS + EVENT_MS);
  t.equal(await metricValue(a.healthPort, 'kube_admission_policy_violations{rule="deny-privileged",namespace="team-a",result="fail"}'), 2, 'shop and cache: db left the count');
  t.equal((await a.child.stop('SIGTERM')).code, 0);

  await installReportCrds(cluster.api);
  const b = await cluster.startReplica(t, 'kas-b', ['--policy-file', policy, '--reports', 'metrics']);
  await b.child.waitForMessage('background audit: first scan complete', STARTUP_MS);
  t.equal(await metricValue(b.healthPort, 'kube_admission_policy_violations{rule="deny-privileged",namespace="team-a",result="fail"}'), 2, 'a new leader counts from the cluster: shop and cache');
  t.equal(reportWrites(cluster.api), 0, 'no report written');
  t.equal((await b.child.stop('SIGTERM')).code, 0);
});

t.test("a Namespace's new labels judge its objects again (namespaceSelector)", async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  await installReportCrds(cluster.api);
  const store = cluster.api.store;
  store.put('deployments', deployment('shop', 'team-a', true));
  const policy = await policyFile(t, `${REPORTS_POLICY}  - name: prod-only
    kind: denyHostNamespaces
    mode: warn
    namespaceSelector: { matchLabels: { tier: prod } }
`);
  const a = await cluster.startReplica(t, 'kas-a', ['--policy-file', policy, '--reports', 'objects']);
  await a.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
  t.equal(resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'prod-only'), undefined, 'team-a is not prod: the rule does not apply');
  const namespace = store.get('namespaces', undefined, 'team-a')!;
  store.put('namespaces', { ...namespace, metadata: { ...namespace.metadata, labels: { ...namespace.metadata?.labels, tier: 'prod' } } });
  await reportsHold(cluster.api, 'the prod rule applied once team-a is prod', () => resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'prod-only')?.result === 'pass', RESULT_BOUND_MS + EVENT_MS);
  t.equal((await a.child.stop('SIGTERM')).code, 0);
});

t.test('--reports-api wgpolicyk8s: PolicyReports for the tools that read the older group', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  await installReportCrds(cluster.api, true);
  cluster.api.store.put('deployments', deployment('shop', 'team-a', true));
  const a = await cluster.startReplica(t, 'kas-a', ['--policy-file', await policyFile(t), '--reports', 'objects', '--reports-api', 'wgpolicyk8s']);
  await a.child.waitForMessage('background audit: first complete report set written', STARTUP_MS);
  const [report] = storedReports(cluster.api, 'team-a', POLICY_REPORTS);
  // Stored in the CRD's storage version; written as v1alpha2.
  t.match(report, { kind: 'PolicyReport', metadata: { name: NAME }, summary: { warn: 0, fail: 1 } });
  t.ok(cluster.api.requests.some((r) => r.verb === 'create' && r.path.startsWith('/apis/wgpolicyk8s.io/v1alpha2/namespaces/team-a/policyreports')), 'created through v1alpha2');
  t.match(resultFor(cluster.api, 'team-a', 'Deployment', 'shop', 'deny-privileged', POLICY_REPORTS), { source: 'kube-admission-server', result: 'fail', severity: 'high' });
  t.equal((await a.child.stop('SIGTERM')).code, 0);
});
