// One rule, whichever engine runs it: `evaluate`'s answer (the product's own
// CEL, the policy loaded as the tools load it) against the API double's ValidatingAdmissionPolicy
// plugin (CEL by @bufbuild/cel, match, params and validationActions modelled on k8s.io/apiserver)
// for the same write sent over HTTPS as a dry run. The double holds either the product's mapping
// of the entry (nativePolicyObjects: what the leader registers for engine native) or, for the
// ported VAPs, the original objects `import` read. Writes are generated (fast-check: labels,
// values, namespaces, operations, users vary); a failure prints the seed and the write, and
// NATIVE_AGREEMENT_SEED=<seed> replays it. Allowed or denied, the HTTP code, the rule's message,
// the warnings and the validation_failure audit entries must agree; where the two engines word
// the same decision differently by design, `agree` says so.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import {
  createThrough,
  doubleAnswer,
  installMapped,
  loadProductPolicy,
  productAnswer,
  seedStored,
  startPolicyDouble,
  type Answer,
  type Operation,
  type PolicyDouble,
  type ProductPolicy,
  type WriteCase,
} from './support/policy/native-agreement.js';
import { policyText } from './support/policy/policy-text.js';
import { runToolInProcess } from './support/tools/tool-runner.js';

const SEED = process.env.NATIVE_AGREEMENT_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.NATIVE_AGREEMENT_SEED);
const RUNS = Number(process.env.NATIVE_AGREEMENT_RUNS ?? 60);
t.comment(`seed ${SEED} (NATIVE_AGREEMENT_SEED=${SEED} replays it), ${RUNS} writes per rule`);

const dir = await mkdtemp(join(tmpdir(), 'kas-native-agreement-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

/** The double's namespaces: the hand entries' selectors and namespaceObject read env/tier, the ported ones environment/tier. */
const NAMESPACES: Record<string, Record<string, string>> = {
  'team-a': { env: 'test', environment: 'test' },
  'team-b': { env: 'prod', environment: 'prod', tier: 'sandbox' },
  'team-c': {},
  'policy-params': {},
};
const ADMIN = undefined;
// In system:masters too: the double's RBAC would refuse a node most of these writes before admission.
const NODE = { username: 'system:node:worker-1', groups: ['system:nodes', 'system:masters'] };

type Kind = 'Deployment' | 'ConfigMap' | 'Pod' | 'Service';

interface Shape {
  kind: Kind;
  namespace: string;
  labels: Record<string, string>;
  replicas: number | undefined;
  keys: number;
}

const labelsArb = fc.record(
  {
    owner: fc.constant('me'),
    team: fc.constantFrom('a', 'b'),
    'cost-center': fc.constant('42'),
    tier: fc.constantFrom('exempt', 'web'),
    app: fc.constantFrom('a', 'b'),
    protected: fc.constantFrom('true', 'false'),
    size: fc.constantFrom('3', '12', 'x'),
  },
  { requiredKeys: [] },
);

let serial = 0;

function objectOf(shape: Shape, name: string): KubeObject {
  const metadata = { name, namespace: shape.namespace, labels: shape.labels };
  switch (shape.kind) {
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata,
        spec: {
          ...(shape.replicas === undefined ? {} : { replicas: shape.replicas }),
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } },
        },
      };
    case 'ConfigMap':
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: Object.fromEntries(Array.from({ length: shape.keys }, (_, i) => [`k${i}`, `v${i}`])) };
    case 'Pod':
      return { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] } };
    case 'Service':
      return { apiVersion: 'v1', kind: 'Service', metadata, spec: { ports: [{ port: 80 + shape.keys }] } };
  }
}

/** Writes of the given kinds and operations; an UPDATE's stored version differs in labels and values. */
function writesOf(kinds: readonly Kind[], operations: readonly Operation[]): fc.Arbitrary<() => WriteCase> {
  const shape = fc.record({
    kind: fc.constantFrom(...kinds),
    namespace: fc.constantFrom('team-a', 'team-b', 'team-c'),
    labels: labelsArb,
    replicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    keys: fc.integer({ min: 0, max: 4 }),
  });
  return fc
    .record({ shape, old: fc.record({ labels: labelsArb, replicas: fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }), keys: fc.integer({ min: 0, max: 4 }) }), operation: fc.constantFrom(...operations), node: fc.boolean() })
    .map(({ shape, old, operation, node }) => {
      // A fresh name per run (fast-check replays a value while shrinking; the double keeps what an UPDATE stored).
      const make = (): WriteCase => {
        const name = `w-${++serial}`;
        const object = objectOf(shape, name);
        const oldObject = objectOf({ ...shape, ...old }, name);
        const user = node ? NODE : ADMIN;
        const base = { label: `${operation} ${shape.kind} ${shape.namespace}/${name}`, ...(user ? { user } : {}) };
        if (operation === 'DELETE') return { ...base, operation, object: oldObject };
        if (operation === 'UPDATE') return { ...base, operation, object, oldObject };
        return { ...base, operation, object };
      };
      // fast-check prints the value: say what the write is.
      return Object.assign(make, { toString: () => JSON.stringify({ operation, node, shape, old }) });
    });
}

/**
 * The two answers agree. Differences by design, not compared:
 * - kube-apiserver's denial names the first failed validation of the first denying binding
 *   (dispatcher.go: deniedDecisions[0]); the webhook reports every failed validation, joined
 *   by "; ", and evaluate lists every denying webhook: the double's message is one of the
 *   product's, or the first part of one.
 * - an expression that fails to evaluate is worded by each CEL implementation its own way: both
 *   must say which expression failed (`expression '<e>' resulted in error: `), not why.
 * - the prefixes ("ValidatingAdmissionPolicy 'kas-x' with binding 'kas-x' denied request: ",
 *   the webhook's name before a warning) name the object that runs the rule, stripped on both sides.
 * - an imported matchCondition that reads params is a guard of every validation: when it fails to
 *   evaluate, each validation fails with it (evaluate names them), where kube-apiserver has one
 *   failure for the policy (the double names the condition). Both must fail that way, not say why.
 *   Under Warn, kube-apiserver drops the warning when the condition's text has a line break (as
 *   Gatekeeper's have); the guard's failure names the validation and arrives.
 */
function agree(t: Test, write: WriteCase, product: Answer, answered: Answer): boolean {
  const double = { ...answered, ...guardFailures(product, answered) };
  const errorPart = (message: string): string => /^(expression '.*' resulted in error: )/s.exec(message)?.[1] ?? message;
  const sameMessage = (ours: string, theirs: string): boolean => ours === theirs || ours.startsWith(`${theirs}; `) || errorPart(ours) === errorPart(theirs) && errorPart(ours) !== ours;
  const problems: string[] = [];
  if (product.allowed !== double.allowed) problems.push(`allowed: evaluate ${product.allowed}, double ${double.allowed}`);
  if (product.code !== double.code) problems.push(`code: evaluate ${product.code}, double ${double.code}`);
  const theirs = double.denials[0];
  if (theirs !== undefined && !product.denials.some((ours) => sameMessage(ours, theirs))) problems.push(`denial: evaluate ${JSON.stringify(product.denials)}, double ${JSON.stringify(theirs)}`);
  const sameList = (a: string[], b: string[]): boolean => a.length === b.length && a.every((m, i) => sameMessage(m, b[i]!));
  if (!sameList(product.warnings, double.warnings)) problems.push(`warnings: evaluate ${JSON.stringify(product.warnings)}, double ${JSON.stringify(double.warnings)}`);
  if (!sameList(product.auditFailures, double.auditFailures)) problems.push(`validation_failure: evaluate ${JSON.stringify(product.auditFailures)}, double ${JSON.stringify(double.auditFailures)}`);
  if (problems.length > 0) t.fail(`${write.label}: the engines disagree`, { problems, write, product, double });
  return problems.length === 0;
}

const GUARD_FAILED = /^expression 'variables\.matchConditions\d* \? .*' resulted in error: composited variable "matchConditions\d*" fails to evaluate: /s;
const FAILED = /^expression '.*' resulted in error: /s;

/** The double's messages, where both engines report the failed guard (see agree), as evaluate words them. */
function guardFailures(product: Answer, double: Answer): Partial<Answer> {
  const both = (ours: string[], theirs: string[]): boolean => ours.length > 0 && ours.every((m) => GUARD_FAILED.test(m)) && theirs.length > 0 && theirs.every((m) => FAILED.test(m));
  return {
    ...(both(product.denials, double.denials) ? { denials: product.denials } : {}),
    ...(both(product.warnings, double.warnings) || (product.warnings.length > 0 && product.warnings.every((m) => GUARD_FAILED.test(m)) && double.warnings.length === 0) ? { warnings: product.warnings } : {}),
  };
}

/** Every generated write through both engines; the decisions seen, so a rule set that never denies (or never allows) is noticed. */
async function compare(t: Test, policy: ProductPolicy, double: PolicyDouble, writes: fc.Arbitrary<() => WriteCase>, examples: readonly Example[] = []): Promise<Set<string>> {
  const namespaces = double.api.store.list('namespaces');
  const seen = new Set<string>();
  const check = async (write: WriteCase): Promise<boolean> => {
    seedStored(double.api, write);
    const product = await productAnswer(policy, write, namespaces);
    const theirs = await doubleAnswer(double, write);
    seen.add(product.allowed ? (product.warnings.length > 0 ? 'warned' : product.auditFailures.length > 0 ? 'audited' : 'allowed') : 'denied');
    return agree(t, write, product, theirs);
  };
  // The hand-listed writes first, each with the decision it must get (so every rule is seen deciding both ways whatever the seed).
  for (const example of examples) {
    const write = exampleWrite(example);
    const before = new Set(seen);
    seen.clear();
    await check(write);
    t.ok(seen.has(example.expect), `${write.label} (${JSON.stringify(example.labels)}): ${example.expect}`);
    for (const s of before) seen.add(s);
  }
  await fc.assert(
    fc.asyncProperty(writes, (make) => check(make())),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  return seen;
}

/** A hand-listed write and the decision it must get from both engines. */
interface Example {
  operation: Operation;
  kind: Kind;
  namespace: string;
  labels: Record<string, string>;
  oldLabels?: Record<string, string>;
  replicas?: number;
  keys?: number;
  node?: boolean;
  /** Default: a fresh one. */
  name?: string;
  expect: 'allowed' | 'denied' | 'warned' | 'audited';
}

function exampleWrite(example: Example): WriteCase {
  const name = example.name ?? `e-${++serial}`;
  const shape: Shape = { kind: example.kind, namespace: example.namespace, labels: example.labels, replicas: example.replicas, keys: example.keys ?? 0 };
  const object = objectOf(shape, name);
  const oldObject = objectOf({ ...shape, labels: example.oldLabels ?? example.labels }, name);
  const base = { label: `${example.operation} ${example.kind} ${example.namespace}/${name}`, ...(example.node ? { user: NODE } : {}) };
  if (example.operation === 'DELETE') return { ...base, operation: 'DELETE', object: oldObject };
  if (example.operation === 'UPDATE') return { ...base, operation: 'UPDATE', object, oldObject };
  return { ...base, operation: 'CREATE', object };
}

async function withDouble(t: Test): Promise<PolicyDouble> {
  const double = await startPolicyDouble(NAMESPACES);
  t.teardown(() => double.close());
  return double;
}

interface HandEntry {
  name: string;
  entry: string;
  kinds: Kind[];
  operations: Operation[];
  examples: Example[];
}

const HAND_ENTRIES: HandEntry[] = [
  {
    name: 'params, variables, messageExpression, reason Forbidden, two validations',
    kinds: ['Deployment'],
    operations: ['CREATE', 'UPDATE'],
    examples: [
      { operation: 'CREATE', kind: 'Deployment', namespace: 'team-a', labels: { owner: 'me' }, replicas: 2, expect: 'allowed' },
      { operation: 'CREATE', kind: 'Deployment', namespace: 'team-a', labels: {}, replicas: 5, expect: 'denied' },
      { operation: 'UPDATE', kind: 'Deployment', namespace: 'team-c', labels: { owner: 'me' }, replicas: 4, expect: 'denied' },
    ],
    entry: `  - name: max-replicas
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }]
    params:
      data: { maxReplicas: "3" }
    variables:
      - { name: replicas, expression: "has(object.spec.replicas) ? object.spec.replicas : 1" }
    validations:
      - expression: "variables.replicas <= int(params.data.maxReplicas)"
        messageExpression: "'replicas ' + string(variables.replicas) + ' exceed ' + params.data.maxReplicas"
        reason: Forbidden
      - expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels"
        message: a Deployment needs an owner label
`,
  },
  {
    name: 'matchConditions on the user, namespaceObject',
    kinds: ['Pod', 'ConfigMap'],
    operations: ['CREATE', 'UPDATE'],
    examples: [
      { operation: 'CREATE', kind: 'Pod', namespace: 'team-b', labels: {}, expect: 'denied' },
      { operation: 'CREATE', kind: 'Pod', namespace: 'team-b', labels: {}, node: true, expect: 'allowed' },
      { operation: 'CREATE', kind: 'Pod', namespace: 'team-b', labels: { owner: 'me' }, expect: 'allowed' },
      { operation: 'UPDATE', kind: 'ConfigMap', namespace: 'team-a', labels: {}, expect: 'allowed' },
    ],
    entry: `  - name: owner-in-prod
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods, configmaps] }]
    matchConditions:
      - { name: not-a-node, expression: "!request.userInfo.username.startsWith('system:node:')" }
    validations:
      - expression: "!has(namespaceObject.metadata.labels) || !('env' in namespaceObject.metadata.labels) || namespaceObject.metadata.labels['env'] != 'prod' || (has(object.metadata.labels) && 'owner' in object.metadata.labels)"
        messageExpression: "'an owner label is required in ' + namespaceObject.metadata.name"
`,
  },
  {
    name: 'validationActions Warn and Audit',
    kinds: ['Deployment', 'Service'],
    operations: ['CREATE', 'UPDATE'],
    examples: [
      { operation: 'CREATE', kind: 'Deployment', namespace: 'team-c', labels: { team: 'a' }, expect: 'allowed' },
      { operation: 'UPDATE', kind: 'Service', namespace: 'team-c', labels: { tier: 'exempt' }, expect: 'warned' },
    ],
    entry: `  - name: team-warn
    kind: cel
    validationActions: [Warn, Audit]
    rules: [{ operations: [CREATE, UPDATE], apiGroups: ["", apps], apiVersions: [v1], resources: [deployments, services] }]
    validations:
      - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
        messageExpression: "object.kind + ' ' + object.metadata.name + ' has no team label'"
      - expression: "!has(object.metadata.labels) || !('tier' in object.metadata.labels) || object.metadata.labels['tier'] != 'exempt'"
        message: tier exempt is not a tier
`,
  },
  {
    name: 'mode audit (the Audit action)',
    kinds: ['ConfigMap'],
    operations: ['CREATE'],
    examples: [
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-c', labels: { app: 'a' }, expect: 'allowed' },
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-c', labels: {}, expect: 'audited' },
    ],
    entry: `  - name: app-audit
    kind: cel
    mode: audit
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "has(object.metadata.labels) && 'app' in object.metadata.labels"
        message: no app label
`,
  },
  {
    name: 'namespaceSelector, objectSelector, excludeResourceRules with resourceNames',
    kinds: ['ConfigMap', 'Service'],
    operations: ['CREATE', 'UPDATE'],
    examples: [
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-a', labels: {}, keys: 3, expect: 'denied' },
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-c', labels: {}, keys: 3, expect: 'allowed' },
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-b', labels: { tier: 'exempt' }, keys: 3, expect: 'allowed' },
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: {}, keys: 3, expect: 'allowed' },
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-a', labels: {}, keys: 3, name: 'settings', expect: 'allowed' },
    ],
    entry: `  - name: small-configs
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps, services] }]
    namespaceSelector: { matchExpressions: [{ key: env, operator: In, values: [prod, test] }] }
    objectSelector: { matchExpressions: [{ key: tier, operator: NotIn, values: [exempt] }] }
    excludeResourceRules:
      - { operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [services] }
      - { operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [configmaps], resourceNames: [settings] }
    validations:
      - expression: "!has(object.data) || size(object.data) <= 2"
        messageExpression: "'at most 2 keys, not ' + string(size(object.data))"
`,
  },
  {
    name: 'DELETE reads oldObject (object is null)',
    kinds: ['ConfigMap'],
    operations: ['DELETE', 'CREATE'],
    examples: [
      { operation: 'DELETE', kind: 'ConfigMap', namespace: 'team-a', labels: { protected: 'true' }, expect: 'denied' },
      { operation: 'DELETE', kind: 'ConfigMap', namespace: 'team-a', labels: { protected: 'false' }, expect: 'allowed' },
      { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-a', labels: { protected: 'true' }, expect: 'allowed' },
    ],
    entry: `  - name: protected
    kind: cel
    rules: [{ operations: [DELETE], apiGroups: [""], apiVersions: [v1], resources: [configmaps] }]
    validations:
      - expression: "object == null && !(has(oldObject.metadata.labels) && 'protected' in oldObject.metadata.labels && oldObject.metadata.labels['protected'] == 'true')"
        messageExpression: "oldObject.metadata.name + ' is protected'"
        reason: Forbidden
`,
  },
  {
    name: 'UPDATE compares object and oldObject',
    kinds: ['ConfigMap', 'Service'],
    operations: ['UPDATE', 'CREATE'],
    examples: [
      { operation: 'UPDATE', kind: 'ConfigMap', namespace: 'team-a', labels: { app: 'b' }, oldLabels: { app: 'a' }, expect: 'denied' },
      { operation: 'UPDATE', kind: 'Service', namespace: 'team-a', labels: {}, oldLabels: { app: 'a' }, expect: 'denied' },
      { operation: 'UPDATE', kind: 'ConfigMap', namespace: 'team-a', labels: { app: 'a' }, oldLabels: { app: 'a' }, expect: 'allowed' },
    ],
    entry: `  - name: app-immutable
    kind: cel
    rules: [{ operations: [UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps, services] }]
    validations:
      - expression: "!has(oldObject.metadata.labels) || !('app' in oldObject.metadata.labels) || (has(object.metadata.labels) && 'app' in object.metadata.labels && object.metadata.labels['app'] == oldObject.metadata.labels['app'])"
        messageExpression: "'the app label is immutable (was ' + oldObject.metadata.labels['app'] + ')'"
`,
  },
  {
    name: 'an evaluation error under failurePolicy Fail',
    kinds: ['Service'],
    operations: ['CREATE'],
    examples: [
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: { size: 'x' }, expect: 'denied' },
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: { size: '12' }, expect: 'denied' },
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: { size: '3' }, expect: 'allowed' },
    ],
    entry: `  - name: size-fail
    kind: cel
    failurePolicy: Fail
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [services] }]
    validations:
      - expression: "!has(object.metadata.labels) || !('size' in object.metadata.labels) || int(object.metadata.labels['size']) < 10"
        message: size must be under 10
`,
  },
  {
    name: 'an evaluation error under failurePolicy Ignore',
    kinds: ['Service'],
    operations: ['CREATE'],
    examples: [
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: { size: 'x' }, expect: 'allowed' },
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: { size: '12' }, expect: 'denied' },
    ],
    entry: `  - name: size-ignore
    kind: cel
    failurePolicy: Ignore
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [services] }]
    validations:
      - expression: "!has(object.metadata.labels) || !('size' in object.metadata.labels) || int(object.metadata.labels['size']) < 10"
        message: size must be under 10
`,
  },
];

for (const hand of HAND_ENTRIES) {
  t.test(`mapped by the product, run by the double: ${hand.name}`, async (t) => {
    const policy = await loadProductPolicy(dir, policyText(hand.entry));
    const double = await withDouble(t);
    t.same(await installMapped(double.api, policy), [], 'the entry may run natively');
    await compare(t, policy, double, writesOf(hand.kinds, hand.operations), hand.examples);
  });
}

const fixture = (name: string): string => fileURLToPath(new URL(`./support/policy/vap-import/${name}`, import.meta.url));

/** `import`'s entries for a fixture, loaded as evaluate loads a policy file. */
async function importedPolicy(name: string): Promise<ProductPolicy> {
  const path = join(dir, `imported-${name.replaceAll('/', '-')}`);
  const run = await runToolInProcess(['import', '-f', fixture(name), '--out', path]);
  if (run.code !== 0) throw new Error(`import ${name}: ${run.code} ${run.stderr}`);
  return loadProductPolicy(dir, await readFile(path, 'utf8'));
}

/** The fixture's own objects (policies, bindings, params) created in the double, after what their kinds need. */
async function installOriginal(double: PolicyDouble, name: string, before: KubeObject[] = []): Promise<void> {
  const objects = parseAllDocuments(await readFile(fixture(name), 'utf8')).map((d) => d.toJSON() as KubeObject);
  // The params first: once its binding is in, a policy on ConfigMaps judges its own params too.
  const isPolicy = (o: KubeObject): boolean => (o.apiVersion ?? '').startsWith('admissionregistration.k8s.io/');
  for (const object of [...before, ...objects.filter((o) => !isPolicy(o)), ...objects.filter(isPolicy)]) await createThrough(double.api, object);
}

const REPLICA_LIMIT_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'replicalimits.limits.example.com' },
  spec: {
    group: 'limits.example.com',
    scope: 'Cluster',
    names: { plural: 'replicalimits', singular: 'replicalimit', kind: 'ReplicaLimit', listKind: 'ReplicaLimitList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

const REPLICA_LIMIT_EXAMPLES: Example[] = [
  { operation: 'CREATE', kind: 'Deployment', namespace: 'team-a', labels: {}, replicas: 5, expect: 'denied' },
  { operation: 'UPDATE', kind: 'Deployment', namespace: 'team-a', labels: {}, replicas: 2, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Deployment', namespace: 'team-a', labels: {}, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Deployment', namespace: 'team-b', labels: {}, replicas: 5, expect: 'allowed' },
];

const TEAM_LABELS_EXAMPLES: Example[] = [
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-c', labels: {}, expect: 'denied' },
  { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-c', labels: { team: 'a' }, expect: 'denied' },
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-c', labels: { team: 'a', 'cost-center': '42' }, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Service', namespace: 'team-c', labels: {}, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-c', labels: {}, node: true, expect: 'allowed' },
  { operation: 'UPDATE', kind: 'Pod', namespace: 'team-b', labels: {}, expect: 'warned' },
  { operation: 'UPDATE', kind: 'Pod', namespace: 'team-c', labels: {}, expect: 'allowed' },
];

t.test('ported VAP (custom params kind, bound by namespaceSelector): imported entry vs the original objects', async (t) => {
  const policy = await importedPolicy('replica-limit.yaml');
  const double = await withDouble(t);
  await installOriginal(double, 'replica-limit.yaml', [REPLICA_LIMIT_CRD]);
  await compare(t, policy, double, writesOf(['Deployment'], ['CREATE', 'UPDATE']), REPLICA_LIMIT_EXAMPLES);
  const other = await withDouble(t);
  t.match(await installMapped(other.api, policy), [/^replica-limit-test-example-com: params are not a ConfigMap's string data/], 'its params (a ReplicaLimit) cannot go into a ConfigMap: the webhook runs it');
});

t.test('ported VAP (params by selector, two bindings, Warn+Audit, matchConditions, excludeResourceRules): imported entries vs the original objects', async (t) => {
  const policy = await importedPolicy('team-labels.yaml');
  const double = await withDouble(t);
  await installOriginal(double, 'team-labels.yaml');
  await compare(t, policy, double, writesOf(['Pod', 'ConfigMap', 'Service'], ['CREATE', 'UPDATE']), TEAM_LABELS_EXAMPLES);
});

t.test('ported VAP (team-labels): the imported entries mapped back by the product and run by the double', async (t) => {
  const policy = await importedPolicy('team-labels.yaml');
  const double = await withDouble(t);
  t.same(await installMapped(double.api, policy), [], 'each imported entry may run natively');
  await compare(t, policy, double, writesOf(['Pod', 'ConfigMap', 'Service'], ['CREATE', 'UPDATE']), TEAM_LABELS_EXAMPLES);
});

/** Gatekeeper's constraints are custom resources of a CRD it writes per template (cluster-scoped, plural the kind in lower case). */
const REQUIRED_LABELS_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'k8srequiredlabels.constraints.gatekeeper.sh' },
  spec: {
    group: 'constraints.gatekeeper.sh',
    scope: 'Cluster',
    names: { plural: 'k8srequiredlabels', singular: 'k8srequiredlabels', kind: 'K8sRequiredLabels', listKind: 'K8sRequiredLabelsList' },
    versions: [{ name: 'v1beta1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

const GATEKEEPER_EXAMPLES: Example[] = [
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-a', name: 'w-bare', labels: {}, expect: 'denied' },
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-a', name: 'w-labelled', labels: { owner: 'me', team: 'a' }, expect: 'allowed' },
  { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-b', name: 'w-team-b', labels: { owner: 'me', team: 'b' }, expect: 'denied' },
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-c', name: 'w-excluded', labels: {}, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Pod', namespace: 'team-a', labels: {}, expect: 'allowed' },
  { operation: 'CREATE', kind: 'ConfigMap', namespace: 'team-b', name: 'w-exempt', labels: { tier: 'exempt' }, expect: 'allowed' },
  { operation: 'CREATE', kind: 'Service', namespace: 'team-a', name: 'w-service', labels: {}, expect: 'warned' },
  { operation: 'UPDATE', kind: 'Pod', namespace: 'team-b', name: 'w-update', labels: { owner: 'me', team: 'a' }, oldLabels: {}, expect: 'allowed' },
];

t.test("ported Gatekeeper VAP (its matchConditions read the constraint: guards of the validations): imported entries vs the original objects", async (t) => {
  const policy = await importedPolicy('gatekeeper/team-labels.yaml');
  const double = await withDouble(t);
  await installOriginal(double, 'gatekeeper/team-labels.yaml', [REQUIRED_LABELS_CRD]);
  const seen = await compare(t, policy, double, writesOf(['Pod', 'ConfigMap', 'Service'], ['CREATE', 'UPDATE']), GATEKEEPER_EXAMPLES);
  t.ok(seen.has('denied') && seen.has('allowed') && seen.has('warned'), `both engines deny, allow and warn: ${[...seen].join(', ')}`);
});

/** The malformed-constraint fixture under another failurePolicy or validation action, for both engines. */
async function variantOf(t: Test, name: string, replace: Array<[string, string]>): Promise<string> {
  let text = await readFile(fixture('gatekeeper/malformed-constraint.yaml'), 'utf8');
  for (const [from, to] of replace) {
    t.ok(text.includes(from), `${name}: the fixture holds ${from}`);
    text = text.replace(from, to);
  }
  const path = join(dir, `malformed-${name}.yaml`);
  await writeFile(path, text);
  return path;
}

const ERROR_VARIANTS: Array<{ name: string; replace: Array<[string, string]>; pod: Example['expect'] }> = [
  { name: 'failurePolicy Fail, Deny', replace: [], pod: 'denied' },
  { name: 'failurePolicy Fail, Warn', replace: [['validationActions:\n    - Deny', 'validationActions:\n    - Warn']], pod: 'warned' },
  { name: 'failurePolicy Ignore, Deny', replace: [['failurePolicy: Fail', 'failurePolicy: Ignore']], pod: 'allowed' },
];

for (const variant of ERROR_VARIANTS) {
  t.test(`ported Gatekeeper VAP whose matchCondition fails to evaluate (${variant.name}): imported entry vs the original objects`, async (t) => {
    const path = await variantOf(t, variant.name.replace(/\W+/g, '-'), variant.replace);
    const run = await runToolInProcess(['import', '-f', path, '--out', `${path}.policy.yaml`]);
    t.equal(run.code, 0, run.stderr);
    const policy = await loadProductPolicy(dir, await readFile(`${path}.policy.yaml`, 'utf8'));
    const double = await withDouble(t);
    const objects = parseAllDocuments(await readFile(path, 'utf8')).map((d) => d.toJSON() as KubeObject);
    const isPolicy = (o: KubeObject): boolean => (o.apiVersion ?? '').startsWith('admissionregistration.k8s.io/');
    for (const object of [REQUIRED_LABELS_CRD, ...objects.filter((o) => !isPolicy(o)), ...objects.filter(isPolicy)]) await createThrough(double.api, object);
    const examples: Example[] = [
      { operation: 'CREATE', kind: 'Pod', namespace: 'team-a', labels: {}, expect: variant.pod },
      { operation: 'CREATE', kind: 'Pod', namespace: 'team-b', labels: { owner: 'me' }, expect: variant.pod },
      { operation: 'CREATE', kind: 'Service', namespace: 'team-a', labels: {}, expect: 'allowed' },
    ];
    await compare(t, policy, double, writesOf(['Pod', 'Service'], ['CREATE', 'UPDATE']), examples);
  });
}
