import { COMMANDS } from '../src/commands/index.js';
import t from 'tap';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { loadConfig, SERVICE_ACCOUNT_DIR } from '../src/config/load-config.js';
import { FLAGS } from '../src/config/flags.js';
import { BUILT_IN_RULES } from '../src/policy/rules/index.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { generatedSecretName } from '../src/tls/secret-api.js';
import { comparable, objectId } from './support/manifests/comparable.js';
import { findObject, objectsOfKind, type KubeObject } from '../local-cluster/util/kube-object.js';
import { chartDir, CHART_VALUES_FOR, NAMESPACE, renderChart, renderInstalls, type Install } from './support/manifests/installs.js';
import { kustomizations } from './support/manifests/kustomizations.js';
import { grantedRules, type PolicyRule } from './support/manifests/rbac.js';
import { schemaProblems } from './support/manifests/schema-validation.js';
import { asDeployment, envValue, podSpecOf } from './support/manifests/workload.js';
import { requireTool } from './support/tools/tools.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHART = chartDir(ROOT);
const run = promisify(execFile);

let installs: Install[] = [];
t.before(async () => {
  installs = await renderInstalls(ROOT);
});
const installNamed = (name: string): Install => {
  const found = installs.find((i) => i.name === name);
  if (!found) throw new Error(`no install named ${name}`);
  return found;
};
const deploymentIn = (objects: readonly KubeObject[], name = 'kube-admission-server') => asDeployment(findObject(objects, 'Deployment', name));
const serverEnv = (objects: readonly KubeObject[], variable: string, name?: string) =>
  envValue(podSpecOf(deploymentIn(objects, name)).containers.find((c) => c.name === 'server')!, variable);

async function helmFails(values: Record<string, unknown>): Promise<string> {
  try {
    await renderChart(ROOT, values);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`helm template accepted ${JSON.stringify(values)}`);
}

t.test('helm lint is clean, with the defaults and with every optional part on', async (t) => {
  const helm = requireTool('helm');
  const everything = ['--set', 'tls.mode=cert-manager', '--set', 'monitoring.podMonitor.enabled=true', '--set', 'monitoring.prometheusRule.enabled=true', '--set', 'namespace.create=true', '--set', 'autoscaling.enabled=true'];
  for (const extra of [[], everything]) {
    const { stdout, stderr } = await run(helm, ['lint', '--strict', CHART, ...extra], { timeout: 30_000 });
    t.match(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/, `lint ${extra.join(' ') || 'defaults'}`);
    t.notMatch(stdout + stderr, /\[(WARNING|ERROR|INFO)\]/, 'no finding at any level');
  }
});

t.test('the chart and the server share one version', async (t) => {
  const chart = parse(await readFile(join(CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
  const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  t.equal(chart.appVersion, version, 'appVersion = package.json version (the default image tag)');
  t.equal(chart.version, version, 'chart version = package.json version');
});

t.test('each chart render agrees with its kustomize counterpart on every object', async (t) => {
  t.same(
    (await kustomizations(ROOT)).map((k) => k.name).sort(),
    Object.keys(CHART_VALUES_FOR).sort(),
    'every kustomization has chart values that correspond to it',
  );
  for (const install of installs.filter((i) => i.tool === 'helm')) {
    const kustomize = installNamed(install.counterpart!).objects;
    // The chart does not own the release namespace unless namespace.create is set (compared below).
    const expectedIds = kustomize.filter((o) => o.kind !== 'Namespace').map(objectId).sort();
    t.same(install.objects.map(objectId).sort(), expectedIds, `${install.name}: the same objects as ${install.counterpart}, less the Namespace`);
    for (const object of install.objects) {
      const counterpart = kustomize.find((o) => objectId(o) === objectId(object));
      t.same(comparable(object), counterpart && comparable(counterpart), `${install.name}: ${objectId(object)} equals ${install.counterpart}'s`);
    }
  }
  const withNamespace = await renderChart(ROOT, { namespace: { create: true } });
  const namespace = findObject(withNamespace, 'Namespace', NAMESPACE);
  t.same(comparable(namespace), comparable(findObject(installNamed('base').objects, 'Namespace', NAMESPACE)), 'namespace.create: the base’s Namespace, restricted Pod Security enforced');
});

t.test('the comparison sees a difference that matters', async (t) => {
  const base = deploymentIn(installNamed('base').objects);
  const changed = structuredClone(base) as unknown as KubeObject;
  (changed as unknown as { spec: { template: { spec: { containers: Array<{ securityContext: object }> } } } }).spec.template.spec.containers[0]!.securityContext = {};
  t.notSame(comparable(changed), comparable(base as unknown as KubeObject), 'a dropped securityContext');
  const relabelled = structuredClone(base) as unknown as KubeObject;
  relabelled.metadata.labels = { ...relabelled.metadata.labels, 'helm.sh/chart': 'x', 'app.kubernetes.io/name': 'other' };
  t.notSame(comparable(relabelled), comparable(base as unknown as KubeObject), 'a changed name label still counts; only Helm’s own labels are ignored');
});

t.test('the values do what values.yaml says', async (t) => {
  const objects = await renderChart(ROOT, {
    replicaCount: 3,
    image: { repository: 'registry.example/kas', tag: '9.9.9', digest: `sha256:${'a'.repeat(64)}`, pullPolicy: 'Always' },
    resources: { requests: { cpu: '200m', memory: '256Mi' }, limits: { cpu: '2', memory: '512Mi' } },
    priorityClassName: 'tenant-critical',
    extraExcludedNamespaces: ['calico-system', 'kube-system'],
    shutdownDelaySeconds: 10,
    logLevel: 'debug',
    imagePullSecrets: [{ name: 'pull' }],
  });
  t.same(objects.flatMap(schemaProblems), [], 'still schema-valid');
  const deployment = deploymentIn(objects);
  const spec = podSpecOf(deployment);
  const server = spec.containers[0]!;
  t.equal(deployment.spec?.replicas, 3);
  t.ok(findObject(objects, 'PodDisruptionBudget', 'kube-admission-server'), 'more than one replica: a budget');
  t.equal(server.image, `registry.example/kas:9.9.9@sha256:${'a'.repeat(64)}`);
  t.equal(server.imagePullPolicy, 'Always');
  t.same(server.resources, { requests: { cpu: '200m', memory: '256Mi' }, limits: { cpu: '2', memory: '512Mi' } });
  t.equal(spec.priorityClassName, 'tenant-critical', 'a class of your own');
  t.same(spec.imagePullSecrets, [{ name: 'pull' }]);
  t.equal(serverEnv(objects, 'SHUTDOWN_DELAY'), '10s');
  t.equal(spec.terminationGracePeriodSeconds, 10 + 5 + 7, 'the grace period follows the delay');
  t.equal(serverEnv(objects, 'LOG_LEVEL'), 'debug');

  const policyText = (findObject(objects, 'ConfigMap', 'kube-admission-server-policy')['data'] as Record<string, string>)['policy.yaml']!;
  const loaded = parsePolicy(policyText, 'policy.yaml');
  if (!loaded.ok) return t.fail(`the server refuses the rendered policy:\n${loaded.errors.join('\n')}`);
  t.same(loaded.policy.excludedNamespaces, ['kube-system', 'calico-system'], 'extra namespaces added once, after the policy’s own');

  const noList = await renderChart(ROOT, { policy: { apiVersion: 'kube-admission-server/v1', kind: 'Policy', webhooks: [] }, extraExcludedNamespaces: ['longhorn-system'] });
  const noListPolicy = parse((findObject(noList, 'ConfigMap', 'kube-admission-server-policy')['data'] as Record<string, string>)['policy.yaml']!) as { excludedNamespaces: string[] };
  t.same(noListPolicy.excludedNamespaces, ['kube-system', 'longhorn-system'], 'a policy without the list keeps the server’s default kube-system');

  const noPriority = await renderChart(ROOT, { priorityClassName: '' });
  t.notOk(podSpecOf(deploymentIn(noPriority)).priorityClassName, 'priorityClassName "" sets none (a quota-limited cluster)');

  const single = await renderChart(ROOT, { replicaCount: 0 });
  t.same(objectsOfKind(single, 'PodDisruptionBudget'), [], 'scaled to zero: no budget');
});

t.test('cert-manager mode with your own issuer signs the serving certificate with it', async (t) => {
  const objects = await renderChart(ROOT, { tls: { mode: 'cert-manager', certManager: { issuerRef: { kind: 'ClusterIssuer', name: 'corp-ca', group: 'cert-manager.io' } } } });
  t.same(objects.flatMap(schemaProblems), []);
  t.same(objectsOfKind(objects, 'Issuer'), [], 'no private CA chain');
  t.same(objectsOfKind(objects, 'Certificate').map((c) => (c['spec'] as { issuerRef: unknown }).issuerRef), [{ kind: 'ClusterIssuer', name: 'corp-ca', group: 'cert-manager.io' }]);
  t.equal(serverEnv(objects, 'TLS_MODE'), 'files');
});

t.test('another release name: every name the server derives is one the RBAC grants', async (t) => {
  const objects = await renderChart(ROOT, {}, 'edge', 'policy-system');
  t.same(objects.flatMap(schemaProblems), []);
  const name = 'edge-kube-admission-server';
  const server = podSpecOf(deploymentIn(objects, name)).containers[0]!;
  // The server's own configuration loader reads the rendered environment, as in the pod.
  const env: Record<string, string> = { POD_NAMESPACE: 'policy-system', POD_NAME: `${name}-abc`, KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  for (const variable of server.env ?? []) if (variable.value !== undefined) env[variable.name] = variable.value;
  const loaded = loadConfig([], { env, readFile: () => undefined, exists: (path) => path.startsWith(SERVICE_ACCOUNT_DIR), hostname: () => 'node' }, COMMANDS);
  if (loaded.kind !== 'run') return t.fail(`the server refuses the rendered environment: ${JSON.stringify(loaded)}`);
  const { config } = loaded;
  const granted = grantedRules(objects, { namespace: 'policy-system', name });
  const allows = (rules: readonly PolicyRule[], resource: string, verb: string, resourceName: string) =>
    rules.some((r) => r.resources.includes(resource) && r.verbs.includes(verb) && (r.resourceNames === undefined || r.resourceNames.includes(resourceName)));
  const namespaced = granted.namespacedRules['policy-system'] ?? [];
  t.ok(allows(granted.clusterRules, 'validatingwebhookconfigurations', 'update', config.configName), `its configurations ${config.configName}`);
  t.ok(allows(granted.clusterRules, 'clusterroles', 'get', config.ownerClusterRole ?? ''), `its owner ClusterRole ${config.ownerClusterRole}`);
  t.ok(allows(namespaced, 'leases', 'update', config.leaseName), `its Lease ${config.leaseName}`);
  t.ok(allows(namespaced, 'secrets', 'update', generatedSecretName(config.serviceName)), `its Secret ${generatedSecretName(config.serviceName)}`);
  t.ok(allows(namespaced, 'deployments', 'get', name), 'its Deployment');
  t.ok(findObject(objects, 'Service', config.serviceName), 'its Service has the name its certificate covers');
  t.ok(findObject(objects, 'ClusterRole', config.ownerClusterRole ?? ''), 'its owner ClusterRole is installed');
});

t.test('monitoring renders Prometheus Operator resources only when enabled', async (t) => {
  const monitoringKinds = (objects: readonly KubeObject[]) => objects.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1').map(objectId);
  t.same(monitoringKinds(installNamed('helm').objects), [], 'off by default');
  const objects = await renderChart(ROOT, { monitoring: { podMonitor: { enabled: true, labels: { release: 'prom' } }, prometheusRule: { enabled: true } } });
  t.same(monitoringKinds(objects).sort(), ['PodMonitor/kube-admission-server', 'PrometheusRule/kube-admission-server']);
  t.same(objects.flatMap(schemaProblems), [], 'valid against the Prometheus Operator CRD schemas');
  const monitor = findObject(objects, 'PodMonitor', 'kube-admission-server') as KubeObject & { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string }> } };
  const pod = podSpecOf(deploymentIn(objects));
  const podLabels = deploymentIn(objects).spec?.template.metadata?.labels ?? {};
  t.ok(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => podLabels[k] === v), 'selects the pods');
  t.same(monitor.spec.podMetricsEndpoints.map((e) => [e.port, e.path]), [['health', '/metrics']]);
  t.ok(pod.containers[0]!.ports?.some((p) => p.name === 'health' && p.containerPort === 8080), 'a port of that name serves /metrics');
  t.equal(monitor.metadata.labels?.['release'], 'prom', 'extra labels for the Prometheus selector');

  // Every metric an alert uses is one the operator guide documents (and the docs test keeps that list true).
  const guide = await readFile(join(ROOT, 'docs', 'operations.md'), 'utf8');
  const documented = new Set([...guide.matchAll(/^\| `(kube_admission_[a-z_]+)` \|/gm)].map((m) => m[1]!));
  const rule = findObject(objects, 'PrometheusRule', 'kube-admission-server') as KubeObject & { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> } };
  const alerts = rule.spec.groups.flatMap((g) => g.rules);
  t.ok(alerts.length >= 4, `${alerts.length} alerts`);
  for (const alert of alerts) {
    const used = [...alert.expr.matchAll(/\b(kube_admission_[a-z_]+?)(?:_bucket|_sum|_count)?\b/g)].map((m) => m[1]!);
    t.ok(used.length > 0 && used.every((metric) => documented.has(metric)), `${alert.alert}: ${used.join(', ')} documented`);
  }
});

t.test('values.schema.json refuses bad values at install time, naming them', async (t) => {
  t.match(await helmFails({ replicaCount: 'two' }), /at '\/replicaCount': got string, want integer/);
  t.match(await helmFails({ replicas: 2 }), /additional properties 'replicas' not allowed/, 'a misspelt key is refused, not ignored');
  t.match(await helmFails({ tls: { mode: 'self-signed' } }), /at '\/tls\/mode': value must be one of 'generate', 'cert-manager'/);
  t.match(await helmFails({ policy: { apiVersion: 'kube-admission-server/v2', kind: 'Policy', webhooks: [] } }), /at '\/policy\/apiVersion'/);
  t.match(await helmFails({ policy: { apiVersion: 'kube-admission-server/v1', kind: 'Policy', webhooks: [{ name: 'x', kind: 'denyPrivilegd' }] } }), /at '\/policy\/webhooks\/0\/kind': value must be one of/);
  t.match(await helmFails({ extraExcludedNamespaces: ['Not_A_Namespace'] }), /at '\/extraExcludedNamespaces\/0'/);
  t.match(await helmFails({ shutdownDelaySeconds: -1 }), /at '\/shutdownDelaySeconds': minimum/);
  t.match(await helmFails({ image: { repository: 'x', pullPolicy: 'Sometimes' } }), /at '\/image\/pullPolicy'/);
  t.match(await helmFails({ resources: { requests: { cpu: 'lots', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } }), /at '\/resources\/requests\/cpu'/);
  t.match(await helmFails({ tls: { mode: 'cert-manager', certManager: { issuerRef: { kind: 'ClusterIssuer' } } } }), /at '\/tls\/certManager\/issuerRef'/, 'an issuer kind without a name');
});

t.test('the schema’s lists follow the server’s', async (t) => {
  const schema = JSON.parse(await readFile(join(CHART, 'values.schema.json'), 'utf8')) as {
    properties: { policy: { properties: { webhooks: { items: { properties: { kind: { enum: string[] } } } } } }; logLevel: { enum: string[] } };
  };
  t.same([...schema.properties.policy.properties.webhooks.items.properties.kind.enum].sort(), [...BUILT_IN_RULES.keys()].sort(), 'every built-in rule kind, and only those');
  const logLevel = FLAGS.find((f) => f.name === 'log-level') as { values: readonly string[] };
  t.same(schema.properties.logLevel.enum, [...logLevel.values]);
});

t.test('your own webhooks: the values init writes render the project’s image and RBAC; clashes are refused', async (t) => {
  const scaffoldValues = async (file: string): Promise<Record<string, unknown>> =>
    parse((await readFile(join(ROOT, 'scaffold', 'deploy', 'helm', file), 'utf8')).replaceAll('{{name}}', 'my-webhooks')) as Record<string, unknown>;
  const values = { ...(await scaffoldValues('values.yaml')), ...(await scaffoldValues('handlers-rbac.yaml')) };
  const objects = await renderChart(ROOT, values);
  const server = podSpecOf(deploymentIn(objects)).containers.find((c) => c.name === 'server')!;
  t.equal(server.image, 'my-webhooks:1.0.0', 'the project’s image');
  t.equal((server as { command?: unknown }).command, undefined, 'its ENTRYPOINT runs the handlers');
  t.same(objects.filter((o) => o.metadata.name.endsWith('-handlers')), [], 'no handler RBAC while no handler declares any');

  t.match(await helmFails({ env: [{ name: 'LOG_LEVEL', value: 'debug' }] }), /at '\/env\/0\/name'/, 'a variable the chart sets itself');
  t.match(await helmFails({ extraVolumes: [{ name: 'tmp', emptyDir: {} }] }), /at '\/extraVolumes\/0\/name'/, 'a volume name of the server’s');
  t.match(await helmFails({ extraVolumeMounts: [{ name: 'x', mountPath: '/tmp' }] }), /at '\/extraVolumeMounts\/0\/mountPath'/, 'the server’s writable /tmp');
  t.match(await helmFails({ entryModule: '--inspect' }), /at '\/entryModule'/, 'a flag is not a module');
  t.match(await helmFails({ handlerRbac: { cluster: { rules: [{ apiGroups: [''], resources: ['*'], verbs: ['get'] }] } } }), /at '\/handlerRbac\/cluster\/rules\/0\/resources\/0'/, 'no wildcard resource');
  t.match(await helmFails({ handlerRbac: { cluster: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['escalate'] }] } } }), /at '\/handlerRbac\/cluster\/rules\/0\/verbs\/0'/, 'only the verbs permissions allows');
  t.match(await helmFails({ handlerRbac: { namespaces: { Not_A_Namespace: { rules: [] } } } }), /invalid propertyName 'Not_A_Namespace'/, 'a namespace name Kubernetes would refuse');
});

t.test('reports: the background audit through the environment the server reads, the CRDs as manifests/crds ships them (kept on uninstall), bad values refused', async (t) => {
  t.equal(serverEnv(await renderChart(ROOT, {}), 'REPORTS'), undefined, 'off by default');
  const on = await renderChart(ROOT, { reports: { enabled: true, api: 'wgpolicyk8s', events: true, maxBytes: '512Ki' } });
  t.same(on.flatMap(schemaProblems), [], 'schema-valid');
  const env = Object.fromEntries(['REPORTS', 'REPORTS_API', 'REPORTS_EVENTS', 'REPORTS_MAX_BYTES'].map((name) => [name, serverEnv(on, name)]));
  t.same(env, { REPORTS: 'objects', REPORTS_API: 'wgpolicyk8s', REPORTS_EVENTS: 'true', REPORTS_MAX_BYTES: '512Ki' });
  const config = loadConfig([], { env: { ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v ?? ''])), KUBERNETES_SERVICE_HOST: '10.0.0.1' }, readFile: () => 'kube-admission-server', exists: () => true, hostname: () => 'pod' }, COMMANDS);
  t.match(config, { kind: 'run', config: { reports: 'objects', reportsApi: 'wgpolicyk8s', reportsEvents: true, reportsMaxBytes: 512 * 1024 } }, 'the server reads them as set');
  t.equal(serverEnv(await renderChart(ROOT, { reports: { enabled: true, objects: false } }), 'REPORTS'), 'metrics', 'objects: false is the gauge and logs only');
  t.same(objectsOfKind(on, 'CustomResourceDefinition'), [], 'no CRD unless installCRDs');

  for (const [api, files] of [
    ['openreports', ['openreports.io_reports.yaml', 'openreports.io_clusterreports.yaml']],
    ['wgpolicyk8s', ['wgpolicyk8s.io_policyreports.yaml', 'wgpolicyk8s.io_clusterpolicyreports.yaml']],
  ] as const) {
    const crds = objectsOfKind(await renderChart(ROOT, { reports: { enabled: true, installCRDs: true, api } }), 'CustomResourceDefinition');
    const shipped = await Promise.all(files.map(async (file) => parse(await readFile(join(ROOT, 'manifests', 'crds', file), 'utf8')) as KubeObject));
    t.same(crds.map((crd) => crd.metadata.name), shipped.map((crd) => crd.metadata.name), `${api}: its two CRDs`);
    for (const [i, crd] of crds.entries()) {
      const { annotations, ...metadata } = crd.metadata as { annotations?: Record<string, string> };
      t.equal(annotations?.['helm.sh/resource-policy'], 'keep', `${crd.metadata.name}: kept on uninstall`);
      const { annotations: shippedAnnotations, ...shippedMetadata } = shipped[i]!.metadata as { annotations?: Record<string, string> };
      t.same({ ...crd, metadata: { ...metadata, annotations: { ...annotations, 'helm.sh/resource-policy': undefined } } }, { ...shipped[i], metadata: { ...shippedMetadata, annotations: { ...shippedAnnotations, 'helm.sh/resource-policy': undefined } } }, `${crd.metadata.name}: as manifests/crds ships it`);
    }
  }
  t.match(await helmFails({ reports: { enabled: true, api: 'kyverno' } }), /at '\/reports\/api'/);
  t.match(await helmFails({ reports: { maxBytes: '1GB' } }), /at '\/reports\/maxBytes'/);
  t.match(await helmFails({ env: [{ name: 'REPORTS', value: 'objects' }] }), /at '\/env\/0\/name'/, 'a variable the chart sets itself');
});
