/**
 * The compiled server with `grouping: auto` against the API double: it registers one webhook per
 * group (named by the group's key, its path naming the members), kube-apiserver's caller makes one
 * call per group for a Pod create, the denial names the entry that decided, and metrics and logs
 * say which entry did what. A policy change that adds an entry keeps the group's name; a
 * kube-apiserver whose cache lags still calls the old path, and every member of it is answered.
 */
import { join } from 'node:path';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';

const policy = (webhooks: string): string => `apiVersion: kube-admission-server/v1\nkind: Policy\ngrouping: auto\nwebhooks:\n${webhooks}`;
const ENTRIES = {
  denyPrivileged: '  - name: deny-privileged\n    kind: denyPrivileged\n',
  requireTeam: '  - name: require-team\n    kind: requireLabels\n    params: { labels: [{ key: team }] }\n',
  warnOwner: '  - name: warn-owner\n    kind: requireLabels\n    mode: warn\n    params: { labels: [{ key: owner }] }\n',
  defaultLabels: '  - name: default-labels\n    kind: defaultLabels\n    params: { labels: { defaulted: "true" } }\n',
  denyHostNamespaces: '  - name: deny-host-namespaces\n    kind: denyHostNamespaces\n',
};

interface Configuration {
  webhooks: { name: string; clientConfig: { service: { path: string } } }[];
}

/** name -> path of each webhook of the stored configuration. */
function registered(cluster: ClusterHarness, kind: 'mutating' | 'validating'): Record<string, string> {
  return Object.fromEntries((cluster.configuration<Configuration>(kind)?.webhooks ?? []).map((w) => [w.name, w.clientConfig.service.path]));
}

t.test('grouping auto: a webhook per group, a call per group, the entry named in the answer, a stable name across changes', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': policy(ENTRIES.denyPrivileged + ENTRIES.requireTeam + ENTRIES.warnOwner + ENTRIES.defaultLabels) });
  const leader = await cluster.startReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  await leader.child.waitForMessage('registered as the leader', EVENT_MS);

  t.same(registered(cluster, 'validating'), {
    'validating-fail-t5.kube-admission-server.kas.svc': '/validate/validating-fail-t5/deny-privileged.require-team',
    'validating-ignore-t5.kube-admission-server.kas.svc': '/validate/validating-ignore-t5/warn-owner',
  });
  t.same(registered(cluster, 'mutating'), { 'mutating-ignore-t5.kube-admission-server.kas.svc': '/mutate/mutating-ignore-t5/default-labels' });

  const caller = cluster.caller(t, () => leader.port);
  const create = (labels: Record<string, string>, extra: Record<string, unknown> = {}) =>
    caller.admit({ operation: 'CREATE', object: podFixture(labels, extra), kind: POD_KIND, resource: POD_RESOURCE });
  const callsBefore = caller.calls.length;
  const denied = await create({ app: 'web' }, { securityContext: { privileged: true } });
  t.equal(caller.calls.length - callsBefore, 3, 'three calls for a Pod create: one per group');
  t.equal(denied.allowed, false);
  if (!denied.allowed) {
    t.equal(denied.status.code, 403);
    t.match(denied.status.message, /^admission webhook "validating-fail-t5\.kube-admission-server\.kas\.svc" denied the request: deny-privileged: .*privileged.*; require-team: .*missing label "team"/);
  }
  t.same(denied.warnings, ['warn-owner: Pod "web" is missing label "owner"'], 'the warn rule of the other group still spoke');

  const allowed = await create({ app: 'web', team: 'a', owner: 'me' });
  t.equal(allowed.allowed, true);
  if (allowed.allowed) t.equal(allowed.object?.metadata?.labels?.['defaulted'], 'true', 'mutated by the mutating group');

  const metrics = await (await fetch(`http://127.0.0.1:${leader.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  t.match(metrics, /kube_admission_requests_total\{webhook="deny-privileged",operation="CREATE",decision="denied"\} 1/, 'counted under the entry');
  t.match(metrics, /kube_admission_requests_total\{webhook="require-team",operation="CREATE",decision="allowed"\} 1/);
  t.match(metrics, /kube_admission_request_duration_seconds_count\{webhook="validating-fail-t5"\} \d+/, 'calls timed under the group');
  const line = await leader.child.waitForLog((l) => l.msg === 'admission review' && l['webhook'] === 'validating-fail-t5' && l['decision'] === 'denied');
  t.match(line, { decidedBy: 'deny-privileged', entries: [{ entry: 'deny-privileged', decision: 'denied' }, { entry: 'require-team', decision: 'denied' }] });

  // A lagging kube-apiserver keeps calling the old path after the change; every member it names is answered.
  const lagging = cluster.laggingCaller(t, () => leader.port, 1500);
  const editedAt = performance.now();
  await volume.write({ 'policy.yaml': policy(ENTRIES.denyPrivileged + ENTRIES.requireTeam + ENTRIES.warnOwner + ENTRIES.defaultLabels + ENTRIES.denyHostNamespaces) });
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > editedAt && r.status === 200, { timeoutMs: EVENT_MS });
  t.same(
    registered(cluster, 'validating'),
    {
      'validating-fail-t5.kube-admission-server.kas.svc': '/validate/validating-fail-t5/deny-privileged.require-team.deny-host-namespaces',
      'validating-ignore-t5.kube-admission-server.kas.svc': '/validate/validating-ignore-t5/warn-owner',
    },
    'an entry added: the same webhook names, the new member in the path',
  );
  const viaLag = await lagging.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(viaLag.allowed, false, 'the lagging kube-apiserver, on the old path, still gets require-team enforced');
  t.same(viaLag.warnings, ['warn-owner: Pod "web" is missing label "owner"'], 'and nothing is "not served"');
  const viaNew = await caller.admit({ operation: 'CREATE', object: { ...podFixture({ app: 'web', team: 'a' }), spec: { hostNetwork: true, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9' }] } }, kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(viaNew.allowed, false, 'the new member is enforced on the new path');
  if (!viaNew.allowed) t.match(viaNew.status.message, /deny-host-namespaces: /);
  t.equal((await leader.child.stop()).code, 0);
});
