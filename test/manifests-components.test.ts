// The kustomize components under manifests/components: each renders on top of the base with
// `kubectl kustomize`, is schema-valid, does what it is for, and agrees with the chart; every
// metric an alert uses is exposed by a running server (scraped from a real child process).
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ClusterHarness, NAME, NAMESPACE as CLUSTER_NAMESPACE } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { componentNames, renderWithComponents } from './support/manifests/components.js';
import { renderChart, NAMESPACE } from './support/manifests/installs.js';
import { findObject, type KubeObject } from '../local-cluster/util/kube-object.js';
import { schemaProblems } from './support/manifests/schema-validation.js';
import { hasFieldList, unknownFields } from '../local-cluster/util/strict-fields.js';
import { asDeployment, envValue, podSpecOf } from './support/manifests/workload.js';
import { podReview, request } from './support/server/server-harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SHIPPED = ['alerts', 'authorizer', 'high-availability', 'namespace-object', 'network-policy', 'pod-monitor', 'reports'];
/** Components that only change what the base has (a grant), and add nothing of their own. */
const PATCH_ONLY = new Set(['authorizer', 'namespace-object']);

type Rule = { alert: string; expr: string; for?: string; labels: Record<string, string> };
type RuleObject = KubeObject & { spec: { groups: Array<{ name: string; rules: Rule[] }> } };

let rendered = new Map<string, KubeObject[]>();
let all: KubeObject[] = [];
t.before(async () => {
  const names = await componentNames(ROOT);
  rendered = new Map(await Promise.all(names.map(async (name) => [name, await renderWithComponents(ROOT, [name])] as const)));
  all = await renderWithComponents(ROOT, names);
});
const componentObjects = async (name: string): Promise<KubeObject[]> => {
  const base = new Set((await renderWithComponents(ROOT, [])).map((o) => `${o.kind}/${o.metadata.name}`));
  return rendered.get(name)!.filter((o) => !base.has(`${o.kind}/${o.metadata.name}`));
};
const deploymentIn = (objects: readonly KubeObject[]) => asDeployment(findObject(objects, 'Deployment', NAME));
const podLabels = (objects: readonly KubeObject[]) => deploymentIn(objects).spec?.template.metadata?.labels ?? {};
const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

t.test('every component renders on the base with kubectl kustomize, alone and all together, schema-valid', async (t) => {
  t.same([...rendered.keys()], SHIPPED, 'the components the docs describe (a new one gets its checks here)');
  for (const [name, objects] of [...rendered, ['all', all] as const]) {
    t.same(objects.flatMap(schemaProblems), [], `${name}: all ${objects.length} objects are schema-valid`);
    const builtIn = objects.filter((o) => !['cert-manager.io/v1', 'monitoring.coreos.com/v1'].includes(o.apiVersion));
    t.ok(builtIn.every(hasFieldList), `${name}: every built-in type has a field list`);
    t.same(builtIn.flatMap((o) => unknownFields(o).map((f) => `${o.kind}/${o.metadata.name}: ${f}`)), [], `${name}: no unknown fields`);
    for (const object of objects.filter((o) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind))) {
      t.equal(object.metadata.namespace, NAMESPACE, `${name}: ${object.kind}/${object.metadata.name} in the install's namespace`);
    }
  }
  for (const name of SHIPPED.filter((n) => !PATCH_ONLY.has(n))) t.ok((await componentObjects(name)).length > 0, `${name} adds objects of its own`);
});

t.test('reports: the leader runs the background audit (REPORTS=objects) with the ClusterRole of the audit bound to the ServiceAccount (test/manifests-rbac.test.ts holds its rules)', async (t) => {
  const objects = rendered.get('reports')!;
  t.equal(envValue(podSpecOf(deploymentIn(objects)).containers[0]!, 'REPORTS'), 'objects');
  t.match(findObject(objects, 'ClusterRoleBinding', `${NAME}-reports`), { roleRef: { kind: 'ClusterRole', name: `${NAME}-reports` }, subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: NAMESPACE }] });
  t.ok(findObject(objects, 'ClusterRole', `${NAME}-reports`));
});

t.test('high-availability: three replicas spread over nodes, an HPA on CPU (test/manifests-availability.test.ts checks the numbers agree)', async (t) => {
  const objects = rendered.get('high-availability')!;
  const deployment = deploymentIn(objects);
  const spec = podSpecOf(deployment);
  t.equal(deployment.spec?.replicas, 3);
  t.same(spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [], [], 'no required anti-affinity: replicas past the node count would stay Pending and block drains');
  const terms = spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
  t.equal(terms.length, 1, 'preferred anti-affinity');
  t.equal(terms[0]?.podAffinityTerm.topologyKey, 'kubernetes.io/hostname', 'on different nodes where there are enough');
  t.ok(selects(terms[0]?.podAffinityTerm.labelSelector?.matchLabels ?? {}, podLabels(objects)), 'against its own pods');
  t.match(deployment.spec?.strategy?.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 }, 'the base rollout: a surge pod always finds a place');
  const budget = findObject(objects, 'PodDisruptionBudget', NAME) as KubeObject & { spec: { maxUnavailable: number } };
  t.ok(3 - budget.spec.maxUnavailable >= 2, 'two replicas keep serving through a drain or a rollout');
  const hpa = findObject(objects, 'HorizontalPodAutoscaler', NAME) as KubeObject & {
    spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number; metrics: Array<{ type: string; resource?: { name: string } }> };
  };
  t.same(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: NAME });
  t.equal(hpa.spec.minReplicas, 3, 'never below the high-availability floor');
  t.ok(hpa.spec.maxReplicas > 3);
  t.same(hpa.spec.metrics.map((m) => [m.type, m.resource?.name]), [['Resource', 'cpu']]);
  t.ok(spec.containers.every((c) => c.resources?.requests?.['cpu']), 'a CPU request for the utilization to be measured against');
});

t.test('network-policy: admits kube-apiserver on the webhook port and the monitoring on the health port', async (t) => {
  const objects = rendered.get('network-policy')!;
  const policy = findObject(objects, 'NetworkPolicy', NAME) as KubeObject & {
    spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: Array<{ from?: unknown[]; ports: Array<{ port: string | number }> }> };
  };
  t.ok(selects(policy.spec.podSelector.matchLabels, podLabels(objects)), 'selects the server pods');
  t.same(policy.spec.policyTypes, ['Ingress'], 'egress to kube-apiserver is left open');
  const containerPorts = podSpecOf(deploymentIn(objects)).containers.flatMap((c) => c.ports ?? []);
  const resolve = (port: string | number) => (typeof port === 'number' ? port : containerPorts.find((p) => p.name === port)?.containerPort);
  const webhook = policy.spec.ingress.find((rule) => rule.ports.some((p) => resolve(p.port) === 8443));
  t.ok(webhook, 'the webhook port is admitted');
  t.equal(webhook?.from, undefined, 'from anywhere: kube-apiserver’s address cannot be named portably');
  t.ok(policy.spec.ingress.some((rule) => rule.from !== undefined && rule.ports.some((p) => resolve(p.port) === 8080)), 'the health port, from selected sources');
  t.ok(policy.spec.ingress.flatMap((r) => r.ports).every((p) => resolve(p.port) !== undefined), 'every named port exists on the container');
});

t.test('pod-monitor scrapes /metrics on the health port of every replica, as the chart’s does', async (t) => {
  const objects = rendered.get('pod-monitor')!;
  const monitor = findObject(objects, 'PodMonitor', NAME) as KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string }> } };
  t.ok(selects(monitor.spec.selector.matchLabels, podLabels(objects)), 'selects the pods');
  t.same(monitor.spec.podMetricsEndpoints.map((e) => [e.port, e.path]), [['health', '/metrics']]);
  const chart = await renderChart(ROOT, { monitoring: { podMonitor: { enabled: true }, prometheusRule: { enabled: true } } });
  const chartMonitor = findObject(chart, 'PodMonitor', NAME) as typeof monitor;
  t.same(chartMonitor.spec.podMetricsEndpoints, monitor.spec.podMetricsEndpoints, 'the chart’s PodMonitor scrapes the same endpoint');
  t.ok(selects(chartMonitor.spec.selector.matchLabels, podLabels(chart)), 'of its own pods (the chart adds its instance label)');
  t.same(findObject(chart, 'PrometheusRule', NAME)['spec'], findObject(rendered.get('alerts')!, 'PrometheusRule', NAME)['spec'], 'and the same alerts');
});

t.test('the alerts are the ones docs/operations.md describes, and every metric they use is exposed by a running server', async (t) => {
  const rule = findObject(rendered.get('alerts')!, 'PrometheusRule', NAME) as RuleObject;
  const alerts = rule.spec.groups.flatMap((g) => g.rules);
  const guide = await readFile(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const section = guide.slice(guide.indexOf('### Alerts'), guide.indexOf('\n## ', guide.indexOf('### Alerts')));
  const documented = [...section.matchAll(/^\| `(KubeAdmission[A-Za-z]+)` \|/gm)].map((m) => m[1]!);
  t.same(alerts.map((a) => a.alert).sort(), [...documented].sort(), 'docs/operations.md lists exactly these alerts');
  for (const topic of ['CertificateExpiring', 'CallsFailing', 'Slow', 'PolicyReloadFailing', 'NoLeader', 'RegistrationFailing']) {
    t.ok(alerts.some((a) => a.alert === `KubeAdmission${topic}`), `an alert for ${topic}`);
  }
  t.ok(alerts.every((a) => ['warning', 'critical'].includes(a.labels['severity'] ?? '')), 'every alert has a severity');

  // A real server, registered with the API double (the leader's metrics exist only there), after
  // one review of a served webhook and one of an unknown one, so every labelled series has a sample.
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a');
  const secret = cluster.api.store.get('secrets', CLUSTER_NAMESPACE, `${NAME}-certs`) as { data: Record<string, string> };
  const ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  const servername = `${NAME}.${CLUSTER_NAMESPACE}.svc`;
  t.equal((await request(replica.port, '/validate/deny-privileged?timeout=5s', podReview(), { ca, servername })).status, 200);
  // An entry this replica does not know and cannot tell from a newer policy's: 503 for kube-apiserver to retry elsewhere, counted as unknown.
  t.equal((await request(replica.port, '/validate/not-served?timeout=5s', podReview(), { ca, servername })).status, 503);
  const text = await (await fetch(`http://127.0.0.1:${replica.healthPort}/metrics`, { signal: AbortSignal.timeout(EVENT_MS) })).text();
  const exposed = new Set(text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]));
  for (const alert of alerts) {
    const used = [...new Set([...alert.expr.matchAll(/\bkube_admission_[a-z_]+\b/g)].map((m) => m[0]))];
    t.ok(used.length > 0, `${alert.alert} uses a metric of the server`);
    t.same(used.filter((metric) => !exposed.has(metric)), [], `${alert.alert}: ${used.join(', ')} exposed on /metrics`);
  }
  t.equal((await replica.child.stop()).code, 0);
});
