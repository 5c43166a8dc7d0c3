import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { applyPatch, computePatch } from '../src/admission/patch.js';
import { loadPolicyFile, parsePolicy } from '../src/policy/policy-file.js';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import type { Webhook } from '../src/admission/types.js';
import { admissionRequest, pod, review } from './support/policy/policy-fixtures.js';

const EXAMPLE = new URL('../policies/example.yaml', import.meta.url).pathname;
const HEADER = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

function errorsOf(text: string): string[] {
  const result = parsePolicy(text, 'p.yaml');
  if (result.ok) throw new Error('expected the policy to be rejected');
  return result.errors;
}

t.test('the bundled example policy loads', async (t) => {
  const result = await loadPolicyFile(EXAMPLE, { ownNamespace: 'kube-admission-server' });
  if (!result.ok) throw new Error(result.errors.join('\n'));
  t.same(result.policy.excludedNamespaces, ['kube-system']);
  t.same(
    result.webhooks.map((w) => [w.name, w.type, result.policy.entries.find((e) => e.spec.name === w.name)?.mode]),
    [
      ['require-app-label', 'validating', 'warn'],
      ['deny-privileged', 'validating', 'enforce'],
      ['deny-host-namespaces', 'validating', 'enforce'],
      ['allowed-registries', 'validating', 'audit'],
      ['default-labels', 'mutating', 'enforce'],
      ['default-resources', 'mutating', 'enforce'],
    ],
  );
  t.doesNotThrow(() => new WebhookRegistry(result.webhooks), 'the registry accepts every webhook');
  const byName = new Map(result.webhooks.map((w) => [w.name, w]));
  t.match(byName.get('deny-privileged'), { failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 5, matchPolicy: 'Equivalent' });
  t.equal(byName.get('deny-privileged')?.reinvocationPolicy, undefined, 'validating webhooks have no reinvocationPolicy');
  t.match(byName.get('default-labels'), { failurePolicy: 'Ignore', reinvocationPolicy: 'Never' });
  t.equal(byName.get('default-resources')?.timeoutSeconds, 3);
  t.equal(byName.get('allowed-registries')?.failurePolicy, 'Ignore');

  // A fresh, plain Pod: warned about its missing label, mutated by the defaulting rules.
  const plain = pod({ containers: [{ name: 'c', image: 'nginx' }] }, {});
  const warned = await review(byName.get('require-app-label')!, admissionRequest(plain));
  t.same(warned, { allowed: true, warnings: ['require-app-label: Pod "web" is missing label "app"'] });
  let current = plain;
  for (const name of ['default-labels', 'default-resources']) {
    const decision = await review(byName.get(name)!, admissionRequest(current));
    if (!('object' in decision)) throw new Error(`${name} did not mutate a plain Pod`);
    current = applyPatch(current, computePatch(current, decision.object));
  }
  t.same(current.metadata?.labels, { 'kube-admission-server/defaulted': 'true' });
  t.same((current['spec'] as { containers: { resources: unknown }[] }).containers[0]?.resources, { requests: { cpu: '50m', memory: '64Mi' } });
  t.same(await review(byName.get('deny-privileged')!, admissionRequest(current)), { allowed: true });
  t.same(await review(byName.get('allowed-registries')!, admissionRequest(current)), { allowed: true }, 'nginx is docker.io/library/nginx');
});

t.test('defaults and overrides of the webhook fields', async (t) => {
  const result = parsePolicy(
    `${HEADER}webhooks:
  - name: labels
    kind: requireLabels
    params: { labels: [{ key: app }] }
    rules:
      - operations: [CREATE]
        apiGroups: [""]
        apiVersions: [v1]
        resources: [pods]
    failurePolicy: Ignore
    sideEffects: NoneOnDryRun
    timeoutSeconds: 30
    matchPolicy: Exact
    namespaceSelector:
      matchLabels: { env: prod }
      matchExpressions:
        - { key: tier, operator: NotIn, values: [sandbox] }
        - { key: example.com/managed, operator: DoesNotExist }
    objectSelector:
      matchExpressions: [{ key: skip-policy, operator: DoesNotExist }]
    matchConditions:
      - name: not-node-users
        expression: "!request.userInfo.username.startsWith('system:node:')"
  - name: labels
    kind: defaultLabels
    reinvocationPolicy: IfNeeded
    params: { labels: { a: b } }
`,
    'p.yaml',
  );
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const [validating, mutating] = result.webhooks as [Webhook, Webhook];
  const { handler: _h, ...spec } = validating;
  t.same(spec, {
    name: 'labels',
    type: 'validating',
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    failurePolicy: 'Ignore',
    sideEffects: 'NoneOnDryRun',
    timeoutSeconds: 30,
    matchPolicy: 'Exact',
    namespaceSelector: {
      matchLabels: { env: 'prod' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['sandbox'] },
        { key: 'example.com/managed', operator: 'DoesNotExist' },
      ],
    },
    objectSelector: { matchExpressions: [{ key: 'skip-policy', operator: 'DoesNotExist' }] },
    matchConditions: [{ name: 'not-node-users', expression: "!request.userInfo.username.startsWith('system:node:')" }],
  });
  t.equal(mutating.name, 'labels', 'a validating and a mutating webhook may share a name (different paths)');
  t.equal(mutating.reinvocationPolicy, 'IfNeeded');
  t.same(mutating.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }], "the rule kind's default rules");
  t.same(result.policy.entries.map((e) => e.kind), ['requireLabels', 'defaultLabels']);
});

t.test('the default rules cover Pods, their debug containers and the workload kinds', async (t) => {
  const result = parsePolicy(`${HEADER}webhooks:\n  - { name: p, kind: denyPrivileged }\n`, 'p.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  const resources = result.webhooks[0]!.rules.flatMap((r) => r.apiGroups.map((g) => r.resources.map((res) => `${g}/${res}`))).flat();
  for (const expected of ['/pods', 'apps/deployments', 'apps/statefulsets', 'apps/daemonsets', 'apps/replicasets', 'batch/jobs', 'batch/cronjobs']) {
    t.ok(resources.includes(expected), expected);
  }
  t.ok(resources.includes('/pods/ephemeralcontainers'), 'kubectl debug');
  const [debug, others] = [result.webhooks[0]!.rules.filter((r) => r.resources.includes('pods/ephemeralcontainers')), result.webhooks[0]!.rules.filter((r) => !r.resources.includes('pods/ephemeralcontainers'))];
  t.same(debug.map((r) => r.operations), [['UPDATE']], 'the subresource is only ever updated');
  t.ok(others.every((r) => r.operations.join() === 'CREATE,UPDATE'));
  t.same(result.policy.entries[0]?.mode, 'enforce');
});

t.test('every problem is reported at once, with its line and column', async (t) => {
  const text = `apiVersion: kube-admission-server/v2
kind: Policy
excludedNamespaces: [Kube_System]
colour: blue
webhooks:
  - name: Bad_Name
    kind: requireLabels
    timeoutSeconds: 45
    failurePolicy: Nope
    mode: block
    rules:
      - operations: [CREATE, PATCH]
        apiGroups: [""]
        resources: [pods]
    params:
      labels:
        - key: "a b"
          pattern: "(["
  - name: same
    kind: denyHostNamespaces
  - name: same
    kind: denyPrivileged
    reinvocationPolicy: Never
    sideEffects: Some
    matchPolicy: Fuzzy
    namespaceSelector:
      matchExpressions:
        - key: env
          operator: In
        - key: env
          operator: Exists
          values: [a]
        - key: env
          operator: Like
    objectSelector:
      matchLabels: { "bad key!": x, ok: "bad value!" }
    matchConditions:
      - name: a
        expression: ""
      - name: a
        expression: "true"
      - name: "-x-"
        expression: "true"
    params:
      deniedCapabilities: ["SYS ADMIN"]
      privileged: true
  - name: other
    kind: denyEverything
`;
  t.same(errorsOf(text), [
    'p.yaml:1:13: apiVersion: must be one of kube-admission-server/v1, got "kube-admission-server/v2"',
    'p.yaml:3:22: excludedNamespaces[0]: "Kube_System" is not a namespace name; it must be a DNS-1123 label: at most 63 lowercase letters, digits or "-", starting and ending with a letter or digit',
    'p.yaml:4:1: unknown field "colour"; valid fields: apiVersion, kind, excludedNamespaces, grouping, engine, report, webhooks',
    'p.yaml:6:11: webhooks[0].name: "Bad_Name" is not a valid webhook name; it must be a DNS-1123 label: at most 63 lowercase letters, digits or "-", starting and ending with a letter or digit (it becomes the path /validate/<name> or /mutate/<name>)',
    'p.yaml:8:21: webhooks[0].timeoutSeconds: must be an integer from 1 to 30, got 45',
    'p.yaml:9:20: webhooks[0].failurePolicy: must be one of Fail, Ignore, got "Nope"',
    'p.yaml:10:11: webhooks[0].mode: must be one of enforce, warn, audit, got "block"',
    'p.yaml:12:9: webhooks[0].rules[0]: missing required field "apiVersions" (a list of API versions such as v1)',
    'p.yaml:12:30: webhooks[0].rules[0].operations[1]: unsupported operation "PATCH"; use CREATE, UPDATE, DELETE, CONNECT, *',
    'p.yaml:17:16: webhooks[0].params.labels[0].key: "a b" is not a valid label key; it must be an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
    'p.yaml:18:20: webhooks[0].params.labels[0].pattern: is not a valid regular expression (RE2 syntax, as Kubernetes uses): error parsing regexp: missing closing ]: `[`',
    'p.yaml:21:11: webhooks[2].name: duplicate validating webhook name "same" (first used on line 19); each needs its own name',
    'p.yaml:23:25: webhooks[2].reinvocationPolicy: only mutating webhooks take reinvocationPolicy; this one is validating',
    'p.yaml:24:18: webhooks[2].sideEffects: must be one of None, NoneOnDryRun, got "Some"',
    'p.yaml:25:18: webhooks[2].matchPolicy: must be one of Exact, Equivalent, got "Fuzzy"',
    'p.yaml:28:11: webhooks[2].namespaceSelector.matchExpressions[0]: operator In needs a non-empty "values" list',
    'p.yaml:32:19: webhooks[2].namespaceSelector.matchExpressions[1].values: must be absent for operator Exists (only In and NotIn take values)',
    'p.yaml:34:21: webhooks[2].namespaceSelector.matchExpressions[2].operator: must be one of In, NotIn, Exists, DoesNotExist, got "Like"',
    'p.yaml:36:22: webhooks[2].objectSelector.matchLabels: key "bad key!" is invalid; it must be an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
    'p.yaml:36:41: webhooks[2].objectSelector.matchLabels.ok: label value "bad value!" is invalid; it must be at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit (or empty)',
    'p.yaml:39:21: webhooks[2].matchConditions[0].expression: must not be empty',
    'p.yaml:40:15: webhooks[2].matchConditions[1].name: duplicate name "a"; each match condition needs its own name',
    'p.yaml:42:15: webhooks[2].matchConditions[2].name: "-x-" is not a valid name; it must be an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
    'p.yaml:45:28: webhooks[2].params.deniedCapabilities[0]: "SYS ADMIN" is not a capability name such as SYS_ADMIN',
    'p.yaml:46:7: webhooks[2].params: unknown field "privileged"; valid fields: allowPrivilegeEscalation, deniedCapabilities',
    'p.yaml:48:11: webhooks[3].kind: must be one of requireLabels, denyPrivileged, denyHostNamespaces, allowedRegistries, defaultLabels, defaultResources, cel, got "denyEverything"',
  ]);
});

t.test('problems in each rule kind’s parameters', async (t) => {
  const text = `${HEADER}webhooks:
  - name: a
    kind: requireLabels
  - name: b
    kind: requireLabels
    params: { labels: [] }
  - name: c
    kind: allowedRegistries
    params: { registries: [nginx, "ghcr.io/acme@sha256:1"] }
  - name: d
    kind: allowedRegistries
    params: { registries: [] }
  - name: e
    kind: defaultLabels
    params: {}
  - name: f
    kind: defaultLabels
    params: { labels: { team: 7, "x/y/z": a }, annotations: { ok: 1.5 } }
  - name: g
    kind: defaultResources
    params: { requests: { cpu: lots, gpu: 1 } }
  - name: h
    kind: defaultResources
    params: { requests: { memory: 2Gi }, limits: { memory: 1Gi } }
  - name: i
    kind: denyHostNamespaces
    params: { hostNetwork: "yes", hostPorts: 1 }
  - name: j
    kind: denyPrivileged
    params: [allowPrivilegeEscalation]
`;
  t.same(errorsOf(text), [
    'p.yaml:4:5: webhooks[0]: requireLabels needs "params.labels": a list of { key, pattern? }',
    'p.yaml:8:23: webhooks[1].params.labels: must list at least one label',
    'p.yaml:11:28: webhooks[2].params.registries[0]: "nginx" must start with a registry host (a name with "." or ":", or localhost), e.g. docker.io/library/ or ghcr.io/acme/',
    'p.yaml:11:35: webhooks[2].params.registries[1]: "ghcr.io/acme@sha256:1" must be a registry host and optional repository path, without tag or digest',
    'p.yaml:14:27: webhooks[3].params.registries: must list at least one registry prefix (an empty list would refuse every image)',
    'p.yaml:17:13: webhooks[4].params: must set at least one label or annotation',
    'p.yaml:20:31: webhooks[5].params.labels.team: must be a string, got 7 (quote it)',
    'p.yaml:20:34: webhooks[5].params.labels: key "x/y/z" is invalid; it must be an optional DNS subdomain prefix and "/", then at most 63 letters, digits, "-", "_" or "." starting and ending with a letter or digit',
    'p.yaml:20:67: webhooks[5].params.annotations.ok: must be a string, got 1.5 (quote it)',
    'p.yaml:23:32: webhooks[6].params.requests.cpu: "lots" is not a quantity; use a non-negative Kubernetes quantity such as "100m", "0.5", "128Mi" or "1Gi"',
    'p.yaml:23:38: webhooks[6].params.requests: unknown field "gpu"; valid fields: cpu, memory',
    'p.yaml:26:25: webhooks[7].params.requests: memory request 2Gi is above the memory limit 1Gi; a request may not exceed its limit',
    'p.yaml:29:28: webhooks[8].params.hostNetwork: must be true or false, got "yes"',
    'p.yaml:29:46: webhooks[8].params.hostPorts: must be true or false, got 1',
    'p.yaml:32:13: webhooks[9].params: must be a mapping, got a list',
  ]);
});

t.test('structural problems', async (t) => {
  t.same(errorsOf(''), ['p.yaml:1:1: the policy file is empty; it needs apiVersion: kube-admission-server/v1, kind: Policy and a webhooks list']);
  t.same(errorsOf('- a\n- b\n'), ['p.yaml:1:1: must be a mapping, got a list']);
  t.same(errorsOf('kind: Policy\n'), [
    'p.yaml:1:1: missing required field "apiVersion" (kube-admission-server/v1)',
    'p.yaml:1:1: missing required field "webhooks" (a list of rule entries (it may be empty))',
  ]);
  t.same(errorsOf(`${HEADER}webhooks: { name: x }\n`), ['p.yaml:3:11: webhooks: must be a list, got a mapping']);
  t.same(errorsOf(`${HEADER}webhooks:\n  - name: x\n  - 42\n`), [
    'p.yaml:4:5: webhooks[0]: missing required field "kind" (one of requireLabels, denyPrivileged, denyHostNamespaces, allowedRegistries, defaultLabels, defaultResources, cel)',
    'p.yaml:5:5: webhooks[1]: must be a mapping, got 42',
  ]);
  t.same(errorsOf(`${HEADER}webhooks:\n  - name: x\n    kind: denyPrivileged\n    rules: []\n    timeoutSeconds: 0\n`), [
    'p.yaml:6:12: webhooks[0].rules: must list at least one rule; a webhook without rules is never called',
    'p.yaml:7:21: webhooks[0].timeoutSeconds: must be an integer from 1 to 30, got 0',
  ]);
  t.same(
    errorsOf(`${HEADER}webhooks:\n  - name: "${'a'.repeat(64)}"\n    kind: denyPrivileged\n`),
    [`p.yaml:4:11: webhooks[0].name: "${'a'.repeat(64)}" is not a valid webhook name; it must be a DNS-1123 label: at most 63 lowercase letters, digits or "-", starting and ending with a letter or digit (it becomes the path /validate/<name> or /mutate/<name>)`],
    'names longer than 63 are refused',
  );
});

t.test('rule lists are checked like kube-apiserver checks them', async (t) => {
  const text = `${HEADER}webhooks:
  - name: x
    kind: denyPrivileged
    rules:
      - operations: ["*", CREATE]
        apiGroups: ["*", apps]
        apiVersions: [""]
        resources: ["*/*", pods]
        scope: Everywhere
      - operations: []
        apiGroups: []
        apiVersions: [v1]
        resources: [pods]
`;
  t.same(errorsOf(text), [
    'p.yaml:7:21: webhooks[0].rules[0].operations: "*" must be the only entry when present',
    'p.yaml:8:20: webhooks[0].rules[0].apiGroups: "*" must be the only entry when present',
    'p.yaml:9:23: webhooks[0].rules[0].apiVersions[0]: API version must not be empty',
    'p.yaml:10:20: webhooks[0].rules[0].resources: "*/*" must be the only entry when present',
    'p.yaml:11:16: webhooks[0].rules[0].scope: must be one of Cluster, Namespaced, *, got "Everywhere"',
    'p.yaml:12:21: webhooks[0].rules[1].operations: must list at least one of CREATE, UPDATE, DELETE, CONNECT, *',
    'p.yaml:13:20: webhooks[0].rules[1].apiGroups: must list at least one API group ("*" for all)',
  ]);
});

t.test('YAML syntax errors and duplicate keys are reported with their position', async (t) => {
  const errors = errorsOf(`${HEADER}webhooks:\n  - name: x\n    name: y\n    kind: [denyPrivileged\n`);
  t.ok(errors.length >= 2, errors.join('\n'));
  t.ok(errors.every((e) => /^p\.yaml:\d+:\d+: invalid YAML: /.test(e)), errors.join('\n'));
  t.ok(errors.some((e) => e.startsWith('p.yaml:5:5: invalid YAML: Map keys must be unique')), errors.join('\n'));
});

t.test('aliases resolve to their anchors', async (t) => {
  const result = parsePolicy(
    `${HEADER}webhooks:
  - name: a
    kind: denyPrivileged
    namespaceSelector: &prod
      matchLabels: { env: prod }
  - name: b
    kind: denyHostNamespaces
    namespaceSelector: *prod
`,
    'p.yaml',
  );
  if (!result.ok) throw new Error(result.errors.join('\n'));
  t.same(result.webhooks[1]?.namespaceSelector, { matchLabels: { env: 'prod' } });
});

t.test('loadPolicyFile reads a file and reports an unreadable one', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'policy-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'policy.yaml');
  await writeFile(path, `${HEADER}webhooks: []\n`);
  const empty = await loadPolicyFile(path);
  t.match(empty, { ok: true, webhooks: [], policy: { path, excludedNamespaces: ['kube-system'], entries: [] } });

  await writeFile(path, `${HEADER}webhooks: 3\n`);
  t.same(await loadPolicyFile(path), { ok: false, errors: [`${path}:3:11: webhooks: must be a list, got 3`] });

  const missing = await loadPolicyFile(join(dir, 'absent.yaml'));
  t.match(missing, { ok: false, errors: [new RegExp(`^${join(dir, 'absent.yaml')}: cannot read the policy file: ENOENT`)] });
});

t.test('rules that need params say so; odd keys and empty values are reported', async (t) => {
  const text = `${HEADER}webhooks:
  - name: a
    kind: allowedRegistries
  - name: b
    kind: defaultLabels
  - name: c
    kind: defaultResources
  - name: d
    kind: defaultLabels
    params:
      labels:
        empty:
        1: one
      annotations: [x]
  - name: e
    kind: requireLabels
    params: { labels: [{ key: app, pattern: "" }, app] }
`;
  t.same(errorsOf(text), [
    'p.yaml:4:5: webhooks[0]: allowedRegistries needs "params.registries": a list of registry prefixes such as ghcr.io/acme/',
    'p.yaml:6:5: webhooks[1]: defaultLabels needs "params" with "labels" and/or "annotations" (maps of key: value)',
    'p.yaml:8:5: webhooks[2]: defaultResources needs "params.requests" (cpu and/or memory) and optionally "params.limits"',
    'p.yaml:14:9: webhooks[3].params.labels: "empty" has no value; give it one (use "" for an empty string)',
    'p.yaml:15:9: webhooks[3].params.labels: keys must be strings, got 1 (quote it)',
    'p.yaml:16:20: webhooks[3].params.annotations: must be a mapping, got a list',
    'p.yaml:19:45: webhooks[4].params.labels[0].pattern: must not be empty',
    'p.yaml:19:51: webhooks[4].params.labels[1]: must be a mapping, got "app"',
  ]);
});

t.test('failurePolicy defaults to Fail only for an enforcing validating rule; explicit values win', async (t) => {
  const text = [
    'apiVersion: kube-admission-server/v1',
    'kind: Policy',
    'webhooks:',
    '  - { name: enforced, kind: denyPrivileged }',
    '  - { name: warned, kind: denyPrivileged, mode: warn }',
    '  - { name: audited, kind: requireLabels, mode: audit, params: { labels: [{ key: app }] } }',
    '  - { name: warned-fail, kind: denyPrivileged, mode: warn, failurePolicy: Fail }',
    '  - { name: enforced-ignore, kind: denyPrivileged, mode: enforce, failurePolicy: Ignore }',
    '  - { name: mutate, kind: defaultLabels, params: { labels: { team: none } } }',
    '  - { name: mutate-warn, kind: defaultLabels, mode: warn, params: { labels: { team: none } } }',
    '  - name: cel-audit',
    '    kind: cel',
    '    mode: audit',
    '    rules: [{ operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }]',
    '    validations: [{ expression: "object.spec.replicas <= 5" }]',
  ].join('\n');
  const loaded = parsePolicy(text, 'defaults.yaml');
  if (!loaded.ok) return t.fail(loaded.errors.join('\n'));
  t.same(
    Object.fromEntries(loaded.webhooks.map((w) => [w.name, w.failurePolicy])),
    { enforced: 'Fail', warned: 'Ignore', audited: 'Ignore', 'warned-fail': 'Fail', 'enforced-ignore': 'Ignore', mutate: 'Ignore', 'mutate-warn': 'Ignore', 'cel-audit': 'Ignore' },
  );
});

t.test('report settings: every validating entry is reported unless it or the policy says otherwise; mutating entries take none', async (t) => {
  const text = `${HEADER}report: false
webhooks:
  - name: privileged
    kind: denyPrivileged
    mode: enforce
  - name: labels
    kind: requireLabels
    report: true
    severity: high
    category: Pod Security
    params: { labels: [{ key: app }] }
  - name: defaults
    kind: defaultLabels
    params: { labels: { team: a } }
`;
  const result = parsePolicy(text, 'p.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  t.equal(result.policy.report, false, "the policy's own default");
  t.same(
    result.policy.entries.map((e) => [e.spec.name, e.report]),
    [
      ['privileged', { enabled: false }],
      ['labels', { enabled: true, severity: 'high', category: 'Pod Security' }],
      ['defaults', { enabled: false }],
    ],
  );
  const defaults = parsePolicy(`${HEADER}webhooks:\n  - name: privileged\n    kind: denyPrivileged\n    mode: enforce\n`, 'p.yaml');
  t.same(defaults.ok && [defaults.policy.report, defaults.policy.entries[0]?.report], [true, { enabled: true }], 'reported by default, enforce included');

  t.same(
    errorsOf(`${HEADER}report: yes please
webhooks:
  - name: privileged
    kind: denyPrivileged
    report: "no"
    severity: urgent
    category: ""
  - name: defaults
    kind: defaultLabels
    report: true
    params: { labels: { team: a } }
`),
    [
      'p.yaml:3:9: report: must be true or false, got "yes please"',
      'p.yaml:7:13: webhooks[0].report: must be true or false, got "no"',
      'p.yaml:8:15: webhooks[0].severity: must be one of critical, high, medium, low, info, got "urgent"',
      'p.yaml:9:15: webhooks[0].category: must not be empty',
      'p.yaml:12:13: webhooks[1].report: "report" is for validating entries: the background audit reports their results, and a mutating entry has none',
    ],
  );
});

t.test("an entry's digest changes with what it says, aliases resolved, and not with how it is written", async (t) => {
  const digests = (text: string): string[] => {
    const result = parsePolicy(`${HEADER}${text}`, 'p.yaml');
    if (!result.ok) throw new Error(result.errors.join('\n'));
    return result.policy.entries.map((e) => e.digest);
  };
  const base = digests('webhooks:\n  - name: a\n    kind: allowedRegistries\n    params: { registries: [ghcr.io/] }\n');
  t.same(digests('webhooks:\n  - kind: allowedRegistries\n    params:\n      registries:\n        - ghcr.io/\n    name: a\n'), base, 'key order and flow style aside');
  t.not(digests('webhooks:\n  - name: a\n    kind: allowedRegistries\n    params: { registries: [quay.io/] }\n')[0], base[0], 'a parameter changed');
  const aliased = (env: string) => digests(`webhooks:\n  - name: a\n    kind: denyPrivileged\n    namespaceSelector: &sel\n      matchLabels: { env: ${env} }\n  - name: b\n    kind: denyHostNamespaces\n    namespaceSelector: *sel\n`);
  t.not(aliased('prod')[1], aliased('dev')[1], 'the anchor an alias names changed');
});
