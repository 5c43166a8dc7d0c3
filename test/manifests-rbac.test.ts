import t from 'tap';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderKustomization } from './support/manifests/kustomize.js';
import { renderWithComponents } from './support/manifests/components.js';
import { renderChart, renderInstalls, type Install } from './support/manifests/installs.js';
import { findObject, objectsOfKind } from '../local-cluster/util/kube-object.js';
import { grantedRules, renderedRbacRoles, renderedRbacRules, type PolicyRule } from './support/manifests/rbac.js';
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';
import type { KubeObject } from '../local-cluster/util/kube-object.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

// Every install the repository ships, kustomize and Helm alike, is held to the same checks.
let installs: Install[] = [];
t.before(async () => {
  installs = await renderInstalls(ROOT);
});
/** generate mode keeps its material in a Secret; cert-manager mode mounts one and reads none through the API. */
const usesSecretsApi = (install: Install) => (install.counterpart ?? install.name) !== 'cert-manager';
const NAME = 'kube-admission-server';
const SERVICE_ACCOUNT = { namespace: NAME, name: NAME };

// Verbs whose requests carry no object name, so a rule restricted by resourceNames never
// matches them (list and watch do match when they select metadata.name; see the ClusterRole).
const NAMELESS_VERBS = new Set(['create', 'deletecollection']);
// Objects whose names are generated, so no resourceNames can be written for them.
const GENERATED_NAMES = new Set(['pods', 'replicasets', 'endpointslices']);
// Resources the server caches whole (list + watch of every object): the Namespace cache.
const CACHED_WHOLE = new Set(['namespaces']);

/** One line per (group, resource, verb, names), so rule sets compare regardless of grouping. */
function grants(rules: readonly PolicyRule[]): string[] {
  const lines = rules.flatMap((rule) =>
    rule.apiGroups.flatMap((group) =>
      rule.resources.flatMap((resource) => rule.verbs.map((verb) => `${group || 'core'} ${resource} ${verb} ${(rule.resourceNames ?? ['*ANY*']).join(',')}`)),
    ),
  );
  return [...new Set(lines)].sort();
}

const CLUSTER_GRANTS = [
  'admissionregistration.k8s.io mutatingwebhookconfigurations create *ANY*',
  ...['delete', 'get', 'list', 'patch', 'update', 'watch'].map((verb) => `admissionregistration.k8s.io mutatingwebhookconfigurations ${verb} ${NAME}`),
  'admissionregistration.k8s.io validatingwebhookconfigurations create *ANY*',
  ...['delete', 'get', 'list', 'patch', 'update', 'watch'].map((verb) => `admissionregistration.k8s.io validatingwebhookconfigurations ${verb} ${NAME}`),
  `rbac.authorization.k8s.io clusterroles get ${NAME}`,
].sort();

const NAMESPACE_GRANTS_COMMON = [
  'apps deployments get kube-admission-server',
  'apps replicasets get *ANY*',
  'coordination.k8s.io leases create *ANY*',
  'coordination.k8s.io leases get kube-admission-server-leader',
  'coordination.k8s.io leases update kube-admission-server-leader',
  'core pods get *ANY*',
  'discovery.k8s.io endpointslices list *ANY*',
  'discovery.k8s.io endpointslices watch *ANY*',
];
const SECRET_GRANTS = ['core secrets create *ANY*', ...['get', 'list', 'update', 'watch'].map((verb) => `core secrets ${verb} kube-admission-server-certs`)];

t.test('the ServiceAccount gets exactly the rights the server uses, in every install', async (t) => {
  t.ok(installs.filter(usesSecretsApi).length >= 2 && installs.filter((i) => !usesSecretsApi(i)).length >= 2, 'kustomize and Helm installs of both modes');
  for (const install of installs) {
    // The custom-handlers install adds what its handlers declared, in roles of their own (checked below).
    const handlerRoles = install.name.endsWith('custom-handlers') ? `${NAME}-handlers` : undefined;
    const granted = grantedRules(install.objects.filter((o) => o.metadata.name !== handlerRoles), SERVICE_ACCOUNT);
    if (handlerRoles) {
      const handlers = grantedRules(install.objects.filter((o) => o.metadata.name === handlerRoles), SERVICE_ACCOUNT);
      t.same(grants(handlers.clusterRules), ['core resourcequotas get compute'], `${install.name}: the handlers' cluster-wide grant, and only it`);
      t.same(Object.fromEntries(Object.entries(handlers.namespacedRules).map(([ns, rules]) => [ns, grants(rules)])), { platform: ['core configmaps get quota-exceptions'] }, `${install.name}: the handlers' namespaced grant, in its namespace`);
    }
    t.same(grants(granted.clusterRules), CLUSTER_GRANTS, `${install.name}: cluster-wide, its two configurations and a read of its own ClusterRole`);
    t.same(Object.keys(granted.namespacedRules), [NAME], `${install.name}: namespaced rights only in the own namespace`);
    const expected = usesSecretsApi(install) ? [...NAMESPACE_GRANTS_COMMON, ...SECRET_GRANTS] : NAMESPACE_GRANTS_COMMON;
    t.same(grants(granted.namespacedRules[NAME] ?? []), [...expected].sort(), `${install.name}: ${usesSecretsApi(install) ? 'generate mode: Secret, Lease, owner chain, EndpointSlices' : 'files mode: no access to Secrets through the API'}`);
  }
  // The helpers that hand the rules to the lifecycle tests read the same thing from a directory.
  const base = await renderedRbacRules(join(ROOT, 'manifests', 'base'));
  t.same(grants(base.namespacedRules[NAME] ?? []), [...NAMESPACE_GRANTS_COMMON, ...SECRET_GRANTS].sort());
});

const SUBJECT_ACCESS_REVIEW_GRANTS = ['authorization.k8s.io subjectaccessreviews create *ANY*'];
const ASKS_AUTHORIZER = {
  policy: {
    apiVersion: 'kube-admission-server/v1',
    kind: 'Policy',
    webhooks: [
      {
        name: 'deployment-deleters',
        kind: 'cel',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        validations: [{ expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()" }],
      },
    ],
  },
};

const NAMESPACE_CACHE_GRANTS = ['core namespaces list *ANY*', 'core namespaces watch *ANY*'];
const READS_NAMESPACE_OBJECT = {
  policy: {
    apiVersion: 'kube-admission-server/v1',
    kind: 'Policy',
    webhooks: [
      {
        name: 'prod-registry',
        kind: 'cel',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
        validations: [{ expression: "namespaceObject.metadata.labels.env != 'prod'" }],
      },
    ],
  },
};

t.test('create on subjectaccessreviews only where the policy asks the authorizer: the chart by itself, kustomize with the component', async (t) => {
  for (const install of installs) {
    t.notOk(grants(grantedRules(install.objects, SERVICE_ACCOUNT).clusterRules).some((g) => g.includes('subjectaccessreviews')), `${install.name}: its policy asks no authorizer, no grant`);
  }
  const chart = await renderChart(ROOT, ASKS_AUTHORIZER);
  t.same(grants(grantedRules(chart, SERVICE_ACCOUNT).clusterRules), [...CLUSTER_GRANTS, ...SUBJECT_ACCESS_REVIEW_GRANTS].sort(), 'helm: exactly create on subjectaccessreviews added');
  const component = await renderWithComponents(ROOT, ['authorizer']);
  t.same(grants(grantedRules(component, SERVICE_ACCOUNT).clusterRules), [...CLUSTER_GRANTS, ...SUBJECT_ACCESS_REVIEW_GRANTS].sort(), 'kustomize + authorizer: the same');
  const named = { policy: { ...ASKS_AUTHORIZER.policy, webhooks: [{ ...ASKS_AUTHORIZER.policy.webhooks[0], validations: [{ expression: "object.metadata.labels.authorizerTeam != ''" }] }] } };
  t.same(grants(grantedRules(await renderChart(ROOT, named), SERVICE_ACCOUNT).clusterRules), CLUSTER_GRANTS, 'a field merely named like it is no ask');
});

t.test('list and watch on namespaces only where the policy reads namespaceObject: the chart by itself, kustomize with the component', async (t) => {
  for (const install of installs) {
    t.notOk(grants(grantedRules(install.objects, SERVICE_ACCOUNT).clusterRules).some((g) => g.startsWith('core namespaces')), `${install.name}: its policy does not read namespaceObject, no grant`);
  }
  const chart = await renderChart(ROOT, READS_NAMESPACE_OBJECT);
  t.same(grants(grantedRules(chart, SERVICE_ACCOUNT).clusterRules), [...CLUSTER_GRANTS, ...NAMESPACE_CACHE_GRANTS].sort(), 'helm: exactly list and watch added');
  const component = await renderWithComponents(ROOT, ['namespace-object']);
  t.same(grants(grantedRules(component, SERVICE_ACCOUNT).clusterRules), [...CLUSTER_GRANTS, ...NAMESPACE_CACHE_GRANTS].sort(), 'kustomize + namespace-object: the same');
  const mentioned = await renderChart(ROOT, { policy: { ...READS_NAMESPACE_OBJECT.policy, webhooks: [{ ...READS_NAMESPACE_OBJECT.policy.webhooks[0], validations: [{ expression: 'object.metadata.namespaceObjectName != ""' }] }] } });
  t.same(grants(grantedRules(mentioned, SERVICE_ACCOUNT).clusterRules), CLUSTER_GRANTS, 'a field merely named like it is no read');
  const customHandlers = await renderChart(ROOT, { readNamespaces: true });
  t.same(grants(grantedRules(customHandlers, SERVICE_ACCOUNT).clusterRules), [...CLUSTER_GRANTS, ...NAMESPACE_CACHE_GRANTS].sort(), 'helm readNamespaces: for custom handlers that set readsNamespaceObject');
});

t.test('no wildcards, and names wherever RBAC can check them, in every install', async (t) => {
  for (const { name, objects } of [
    ...installs,
    { name: 'helm asking the authorizer', objects: await renderChart(ROOT, ASKS_AUTHORIZER) },
    { name: 'helm reading namespaceObject', objects: await renderChart(ROOT, READS_NAMESPACE_OBJECT) },
  ]) {
    for (const role of [...objectsOfKind(objects, 'ClusterRole'), ...objectsOfKind(objects, 'Role')]) {
      for (const [index, rule] of ((role['rules'] as PolicyRule[] | undefined) ?? []).entries()) {
        const label = `${name}: ${role.kind} ${role.metadata.name} rule ${index}`;
        const fields = [...rule.apiGroups, ...rule.resources, ...rule.verbs, ...(rule.resourceNames ?? [])];
        t.notOk(fields.some((f) => f.includes('*')), `${label}: no wildcard`);
        t.notOk('nonResourceURLs' in rule, `${label}: no non-resource URLs`);
        const nameless = rule.verbs.filter((v) => NAMELESS_VERBS.has(v));
        t.ok(nameless.length === 0 || nameless.length === rule.verbs.length, `${label}: create stands apart from named verbs (resourceNames would never match it)`);
        const cachedWhole = rule.resources.every((r) => CACHED_WHOLE.has(r)) && rule.verbs.every((v) => v === 'list' || v === 'watch');
        const nameable = nameless.length === 0 && !cachedWhole && !rule.resources.every((r) => GENERATED_NAMES.has(r));
        if (nameable) t.ok((rule.resourceNames ?? []).length > 0, `${label}: restricted by resourceNames`);
        if (nameless.length > 0) t.equal(rule.resourceNames, undefined, `${label}: no resourceNames on a verb that never carries a name`);
      }
    }
  }
});

t.test('bindings tie the roles to the server’s ServiceAccount, and that ServiceAccount runs the pods', async (t) => {
  for (const { name, objects } of installs) {
    const clusterBinding = findObject(objects, 'ClusterRoleBinding', NAME);
    t.same(clusterBinding['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: NAME }, `${name}: ClusterRoleBinding`);
    t.same(clusterBinding['subjects'], [{ kind: 'ServiceAccount', ...SERVICE_ACCOUNT }]);
    const binding = findObject(objects, 'RoleBinding', NAME);
    t.same(binding['roleRef'], { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: NAME }, `${name}: RoleBinding`);
    t.same(binding['subjects'], [{ kind: 'ServiceAccount', ...SERVICE_ACCOUNT }]);
    const deployment = findObject(objects, 'Deployment', NAME) as { spec?: { template?: { spec?: { serviceAccountName?: string } } } };
    t.equal(deployment.spec?.template?.spec?.serviceAccountName, NAME, `${name}: the pods run as it`);
    findObject(objects, 'ServiceAccount', NAME);
  }
});

t.test('grantedRules counts only bindings of the given ServiceAccount', async (t) => {
  const objects = await renderKustomization(join(ROOT, 'manifests', 'base'));
  const stranger = grantedRules(objects, { namespace: 'default', name: NAME });
  t.same(stranger.clusterRules, [], 'a same-named ServiceAccount elsewhere gets nothing');
  t.same(stranger.namespacedRules, {});
});

t.test('renderedRbacRoles hands the bound roles over in the API test double’s RBAC shape', async (t) => {
  const policy = await renderedRbacRoles(join(ROOT, 'manifests', 'base'));
  t.equal(policy.user, 'system:serviceaccount:kube-admission-server:kube-admission-server');
  t.same(grants(policy.clusterRoles.flatMap((r) => r.rules)), CLUSTER_GRANTS);
  t.same(policy.roles.map((r) => r.metadata.namespace), [NAME], 'roles carry their namespace');
  t.same(grants(policy.roles.flatMap((r) => r.rules)), [...NAMESPACE_GRANTS_COMMON, ...SECRET_GRANTS].sort());
});

const GOES_NATIVE = {
  policy: {
    apiVersion: 'kube-admission-server/v1',
    kind: 'Policy',
    engine: 'auto',
    webhooks: [
      { name: 'max-replicas', kind: 'cel', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], params: { data: { maxReplicas: '3' } }, validations: [{ expression: 'object.spec.replicas <= 3' }] },
      { name: 'owner-label', kind: 'cel', engine: 'native', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], validations: [{ expression: 'has(object.metadata.labels.owner)' }] },
      { name: 'stays', kind: 'cel', engine: 'webhook', rules: [{ operations: ['CREATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], validations: [{ expression: 'true' }] },
      { name: 'deny-privileged', kind: 'denyPrivileged' },
      { name: 'team-labels', kind: 'defaultLabels', params: { labels: { team: 'a' } } },
      { name: 'dry-labels', kind: 'defaultLabels', mode: 'warn', params: { labels: { team: 'a' } } },
    ],
  },
};
const NATIVE_POLICY_NAMES = `${NAME}-max-replicas,${NAME}-owner-label`;
const NATIVE_CLUSTER_GRANTS = [
  ...['validatingadmissionpolicies', 'validatingadmissionpolicybindings'].flatMap((resource) => [
    ...['create', 'list', 'watch'].map((verb) => `admissionregistration.k8s.io ${resource} ${verb} *ANY*`),
    ...['delete', 'get', 'update'].map((verb) => `admissionregistration.k8s.io ${resource} ${verb} ${NATIVE_POLICY_NAMES}`),
  ]),
  // The enforcing defaultLabels entry (engine auto from the policy) as a MutatingAdmissionPolicy; the warn one stays a webhook.
  ...['mutatingadmissionpolicies', 'mutatingadmissionpolicybindings'].flatMap((resource) => [
    ...['create', 'list', 'watch'].map((verb) => `admissionregistration.k8s.io ${resource} ${verb} *ANY*`),
    ...['delete', 'get', 'update'].map((verb) => `admissionregistration.k8s.io ${resource} ${verb} ${NAME}-team-labels`),
  ]),
];
const NATIVE_NAMESPACE_GRANTS = [
  ...['create', 'list', 'watch'].map((verb) => `core configmaps ${verb} *ANY*`),
  ...['delete', 'get', 'update'].map((verb) => `core configmaps ${verb} ${NAME}-max-replicas-params`),
];

t.test('the native policy objects only where an entry may go native, each named where RBAC can check it (the chart)', async (t) => {
  for (const install of installs) {
    const granted = grantedRules(install.objects, SERVICE_ACCOUNT);
    t.notOk(grants(granted.clusterRules).some((g) => g.includes('admissionpolicies') || g.includes('admissionpolicybindings')), `${install.name}: no native entry, no grant`);
    t.notOk(grants(granted.namespacedRules[NAME] ?? []).some((g) => g.startsWith('core configmaps')), `${install.name}: no ConfigMap either`);
  }
  const chart = grantedRules(await renderChart(ROOT, GOES_NATIVE), SERVICE_ACCOUNT);
  t.same(grants(chart.clusterRules), [...CLUSTER_GRANTS, ...NATIVE_CLUSTER_GRANTS].sort(), 'the policies and bindings of the two native or auto cel entries and of the enforcing defaultLabels entry, each kind by its own names');
  t.same(grants(chart.namespacedRules[NAME] ?? []), [...NAMESPACE_GRANTS_COMMON, ...SECRET_GRANTS, ...NATIVE_NAMESPACE_GRANTS].sort(), 'the params ConfigMap of the one with params, by name');
  const allWebhook = { policy: { ...GOES_NATIVE.policy, engine: 'webhook', webhooks: GOES_NATIVE.policy.webhooks.filter((w) => w.name !== 'owner-label') } };
  const labelsOnly = { policy: { ...GOES_NATIVE.policy, webhooks: GOES_NATIVE.policy.webhooks.filter((w) => w.kind === 'defaultLabels') } };
  const mapOnly = grantedRules(await renderChart(ROOT, labelsOnly), SERVICE_ACCOUNT);
  t.notOk(grants(mapOnly.clusterRules).some((g) => g.includes('validatingadmissionpolic')), 'a policy with only defaultLabels entries: no right on ValidatingAdmissionPolicies');
  t.notOk(grants(mapOnly.namespacedRules[NAME] ?? []).some((g) => g.startsWith('core configmaps')), 'nor on ConfigMaps');
  t.same(grants(grantedRules(await renderChart(ROOT, allWebhook), SERVICE_ACCOUNT).clusterRules), CLUSTER_GRANTS, 'engine webhook everywhere: nothing added');
});

t.test('render --native-rbac gives a kustomize install the rules the chart grants for the same policy, and nothing without a native entry', async (t) => {
  const dir = await tempDir(t, 'kas-native-rbac-');
  const renderFor = async (policy: unknown): Promise<KubeObject[]> => {
    const file = join(dir, 'policy.yaml');
    await writeFile(file, stringify(policy));
    const run = await runToolInProcess(['render', '--native-rbac', '--policy-file', file, '--namespace', NAME]);
    t.equal(run.code, 0, run.stderr);
    return (parse(run.stdout) as { kind: string; items: KubeObject[] }).items;
  };
  const base = installs.find((install) => install.name === 'base');
  t.ok(base, 'the kustomize base is among the installs');
  const kustomize = grantedRules([...(base?.objects ?? []), ...(await renderFor(GOES_NATIVE.policy))], SERVICE_ACCOUNT);
  t.same(grants(kustomize.clusterRules), [...CLUSTER_GRANTS, ...NATIVE_CLUSTER_GRANTS].sort(), 'the base plus the rendered ClusterRole: the chart\'s cluster rules for this policy');
  t.same(grants(kustomize.namespacedRules[NAME] ?? []), [...NAMESPACE_GRANTS_COMMON, ...SECRET_GRANTS, ...NATIVE_NAMESPACE_GRANTS].sort(), 'and its Role: the chart\'s namespace rules');
  const allWebhook = { ...GOES_NATIVE.policy, engine: 'webhook', webhooks: GOES_NATIVE.policy.webhooks.filter((w) => w.name !== 'owner-label') };
  t.same(await renderFor(allWebhook), [], 'engine webhook everywhere: an empty List');
  const labelsOnly = { ...GOES_NATIVE.policy, webhooks: GOES_NATIVE.policy.webhooks.filter((w) => w.kind === 'defaultLabels') };
  const mapOnly = grantedRules(await renderFor(labelsOnly), SERVICE_ACCOUNT);
  t.same(
    grants(mapOnly.clusterRules),
    NATIVE_CLUSTER_GRANTS.filter((g) => g.includes('mutatingadmissionpolic')).sort(),
    'only defaultLabels entries: the MutatingAdmissionPolicy rules alone (and no Role)',
  );
  t.same(mapOnly.namespacedRules[NAME] ?? [], []);
  const noParams = { ...GOES_NATIVE.policy, webhooks: GOES_NATIVE.policy.webhooks.filter((w) => w.name !== 'max-replicas') };
  const withoutParams = grantedRules(await renderFor(noParams), SERVICE_ACCOUNT);
  t.same(grants(withoutParams.namespacedRules[NAME] ?? []), ['core configmaps list *ANY*', 'core configmaps watch *ANY*'], 'no entry with params: the ConfigMaps are watched, none created');
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, stringify({ ...GOES_NATIVE.policy, webhooks: [{ name: 'typo', kind: 'cell' }] }));
  const refused = await runToolInProcess(['render', '--native-rbac', '--policy-file', bad, '--namespace', NAME]);
  t.equal(refused.code, 2, 'a bad policy file is exit 2');
  t.match(refused.stderr, /^kube-admission-server: invalid policy file:\n.*bad\.yaml:\d+:\d+: webhooks\[0\]\.kind: must be one of .*got "cell"/s, 'naming the line and what is wrong');
  t.equal(refused.stdout, '');
});

t.test('the background audit: render --reports-rbac gives kustomize the rules the chart grants for the same policy and values; the component holds them for the base policy', async (t) => {
  const dir = await tempDir(t, 'kas-reports-rbac-');
  const cel = { name: 'services-named', kind: 'cel', rules: [{ operations: ['CREATE'], apiGroups: ['', 'example.com'], apiVersions: ['v1'], resources: ['services', 'widgets/status'] }], validations: [{ expression: 'true' }] };
  const policy = {
    apiVersion: 'kube-admission-server/v1',
    kind: 'Policy',
    webhooks: [
      { name: 'deny-privileged', kind: 'denyPrivileged' },
      { name: 'not-reported', kind: 'cel', report: false, rules: [{ operations: ['CREATE'], apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], resources: ['ingresses'] }], validations: [{ expression: 'true' }] },
      cel,
      { name: 'team-labels', kind: 'defaultLabels', params: { labels: { team: 'a' } } },
    ],
  };
  const rendered = async (value: unknown, ...flags: string[]): Promise<KubeObject[]> => {
    const file = join(dir, 'policy.yaml');
    await writeFile(file, stringify(value));
    const run = await runToolInProcess(['render', '--reports-rbac', '--policy-file', file, '--namespace', NAME, ...flags]);
    t.equal(run.code, 0, run.stderr);
    return (parse(run.stdout) as { items: KubeObject[] }).items;
  };
  const clusterGrants = (objects: KubeObject[]) => grants(grantedRules(objects, SERVICE_ACCOUNT).clusterRules);
  const chartGrants = async (values: Record<string, unknown>) => clusterGrants((await renderChart(ROOT, { policy, reports: { enabled: true, ...values } })).filter((o) => o.metadata.name.endsWith('-reports')));

  const kustomize = clusterGrants(await rendered(policy, '--reports', 'objects'));
  const listed = (group: string, resources: string[]) => resources.flatMap((r) => ['list', 'watch'].map((verb) => `${group} ${r} ${verb} *ANY*`));
  t.same(
    kustomize,
    [
      ...listed('core', ['namespaces', 'pods', 'podtemplates', 'replicationcontrollers', 'services', 'widgets']),
      ...listed('apps', ['daemonsets', 'deployments', 'replicasets', 'statefulsets']),
      ...listed('batch', ['cronjobs', 'jobs']),
      ...listed('example.com', ['services', 'widgets']),
      ...['clusterreports', 'reports'].flatMap((r) => ['create', 'delete', 'get', 'list', 'update'].map((verb) => `openreports.io ${r} ${verb} *ANY*`)),
    ].sort(),
    'list and watch on what the reported rules match (defaults for the built-ins, subresources as their resource), the Namespaces, and the reports; nothing for the unreported entry or the mutating one',
  );
  t.same(await chartGrants({}), kustomize, 'the chart grants the same');
  const wgEvents = clusterGrants(await rendered(policy, '--reports', 'objects', '--reports-api', 'wgpolicyk8s', '--reports-events'));
  t.ok(wgEvents.includes('wgpolicyk8s.io policyreports update *ANY*') && wgEvents.includes('core events create *ANY*') && !wgEvents.some((g) => g.startsWith('openreports.io')), 'the wgpolicyk8s reports and Events');
  t.same(await chartGrants({ api: 'wgpolicyk8s', events: true }), wgEvents);
  const metricsOnly = clusterGrants(await rendered(policy, '--reports', 'metrics'));
  t.notOk(metricsOnly.some((g) => g.includes('reports ')), 'without report objects, no right on them');
  t.same(await chartGrants({ objects: false }), metricsOnly);
  t.same(await rendered({ ...policy, report: false, webhooks: policy.webhooks.filter((w) => w !== cel) }), [], 'nothing reported: an empty List');

  const component = await renderWithComponents(ROOT, ['reports']);
  t.same(
    clusterGrants(component.filter((o) => o.metadata.name.endsWith('-reports'))),
    clusterGrants(await rendered(parse(await readFile(join(ROOT, 'manifests', 'base', 'policy.yaml'), 'utf8')), '--reports', 'objects')),
    'manifests/components/reports holds what render --reports-rbac prints for the base policy',
  );
});
