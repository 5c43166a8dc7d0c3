/**
 * Serving a grouped webhook over real TLS. The reference is the API double's admission caller
 * (kube-apiserver's dispatch, written outside src/): the same policy registered one webhook per
 * entry and registered grouped must admit the same requests, mutate them the same way and show
 * the same warnings, with one call per group. Then, call by call: each member's own selectors,
 * matchConditions, failurePolicy and time budget, mutations in entry order (and reinvocation),
 * audit annotations named by member, members the replica does not know, metrics and logs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { applyWebhookPatch } from '../local-cluster/admission-caller/patching.js';
import { createAdmissionCaller, type AdmitRequest, type AdmitResult } from '../local-cluster/admission-caller/index.js';
import { startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { desiredConfigurations } from '../src/registration/desired-configurations.js';
import { groupWebhooks, type WebhookGroup } from '../src/webhooks/grouping.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { webhookPath } from '../src/webhooks/group-path.js';
import type { Webhook, WebhookSpec } from '../src/admission/types.js';
import { createTestCa, decodePatch, mutating, podReview, request, serve, validating, type ReviewResponse } from './support/server/server-harness.js';

const ca = createTestCa();
const SERVICE = 'kube-admission-server';
const NAMESPACE = 'default';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: require-team
    kind: requireLabels
    params: { labels: [{ key: team }] }
  - name: deny-privileged
    kind: denyPrivileged
  - name: warn-owner
    kind: requireLabels
    mode: warn
    params: { labels: [{ key: owner }] }
  - name: audit-registries
    kind: allowedRegistries
    mode: audit
    params: { registries: [registry.k8s.io/] }
  - name: team-b-cost-center
    kind: requireLabels
    namespaceSelector: { matchExpressions: [{ key: kubernetes.io/metadata.name, operator: In, values: [team-b] }] }
    params: { labels: [{ key: cost-center }] }
  - name: gpu-quota
    kind: requireLabels
    objectSelector: { matchLabels: { gpu: "true" } }
    params: { labels: [{ key: quota }] }
  - name: no-latest
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    matchConditions: [{ name: not-batch, expression: "!has(object.metadata.labels) || !('batch' in object.metadata.labels)" }]
    validations: [{ expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))", message: no latest images }]
  - name: default-labels
    kind: defaultLabels
    params: { labels: { defaulted: "true" } }
  - name: tier-for-defaulted
    kind: defaultLabels
    objectSelector: { matchLabels: { defaulted: "true" } }
    params: { labels: { tier: standard } }
  - name: default-resources
    kind: defaultResources
    params: { requests: { cpu: 50m } }
`;

const loaded = parsePolicy(POLICY, 'policy.yaml', { ownNamespace: NAMESPACE });
if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
const groups = groupWebhooks(loaded.webhooks);

const api = await startFakeApiServer({ namespaces: ['team-a', 'team-b'] });
const served = await serve(loaded.webhooks, { ca, groups });
const caller = createAdmissionCaller({ api, resolveService: () => ({ host: '127.0.0.1', port: served.port }) });
t.teardown(async () => {
  await caller.close();
  await served.server.close(2000);
  await api.close();
});

function register(specs: readonly WebhookSpec[]): void {
  for (const resource of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const) {
    for (const object of api.store.list(resource)) api.store.delete(resource, undefined, object.metadata?.name ?? '');
  }
  const desired = desiredConfigurations({ configName: SERVICE, serviceName: SERVICE, namespace: NAMESPACE, caBundlePem: ca.certPem, webhooks: specs, excludedNamespaces: ['kube-system'] });
  api.store.put('mutatingwebhookconfigurations', desired.mutating as KubeObject);
  api.store.put('validatingwebhookconfigurations', desired.validating as KubeObject);
}

const podRequest = (labels: Record<string, string>, namespace = 'team-a', container: Record<string, unknown> = {}): AdmitRequest => ({
  operation: 'CREATE',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace, labels }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.9', ...container }] } },
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
});

interface Admitted {
  result: AdmitResult;
  calls: number;
  denying: string[];
}

async function admit(specs: readonly WebhookSpec[], admitRequest: AdmitRequest): Promise<Admitted> {
  register(specs);
  const before = caller.calls.length;
  const result = await caller.admit(admitRequest);
  const calls = caller.calls.slice(before);
  return { result, calls: calls.length, denying: calls.filter((c) => c.outcome === 'denied').map((c) => c.webhook.split('.')[0]!) };
}

/** Audit annotations by the entry that wrote them: `<entry>.<svc>/<key>` one by one, `<group>.<svc>/<entry>.<key>` grouped. */
function annotationsByEntry(annotations: Record<string, string>, grouped: boolean): Record<string, string> {
  const byEntry: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations)) {
    const [webhook, name] = key.split('/') as [string, string];
    if (!webhook.endsWith(`.${SERVICE}.${NAMESPACE}.svc`)) continue;
    byEntry[grouped ? name : `${webhook.split('.')[0]}.${name}`] = value;
  }
  return byEntry;
}

const comparable = (object: KubeObject | undefined) => ({ labels: object?.metadata?.labels, spec: object?.spec });

t.test('grouped, the policy admits, mutates and warns exactly as registered one webhook per entry, in one call per group', async (t) => {
  const cases: [string, AdmitRequest][] = [
    ['labelled, clean', podRequest({ team: 'a', owner: 'x' })],
    ['no team label', podRequest({ owner: 'x' })],
    ['no team, privileged, latest image from elsewhere', podRequest({}, 'team-a', { image: 'nginx:latest', securityContext: { privileged: true } })],
    ['team-b without cost-center', podRequest({ team: 'a' }, 'team-b')],
    ['team-b with cost-center', podRequest({ team: 'a', 'cost-center': '7' }, 'team-b')],
    ['gpu without quota', podRequest({ team: 'a', gpu: 'true' })],
    ['batch with latest (matchCondition false)', podRequest({ team: 'a', batch: 'x' }, 'team-a', { image: 'registry.k8s.io/pause:latest' })],
    ['latest without batch', podRequest({ team: 'a' }, 'team-a', { image: 'registry.k8s.io/pause:latest' })],
    ['kube-system (excluded)', podRequest({}, 'kube-system', { securityContext: { privileged: true } })],
  ];
  for (const [what, admitRequest] of cases) {
    const one = await admit(loaded.webhooks, admitRequest);
    const grouped = await admit(groups, admitRequest);
    t.equal(grouped.result.allowed, one.result.allowed, `${what}: the same decision (${one.result.allowed ? 'allowed' : 'denied'})`);
    if (one.result.allowed && grouped.result.allowed) {
      t.same(comparable(grouped.result.object), comparable(one.result.object), `${what}: the same object after the mutations`);
    } else if (!one.result.allowed && !grouped.result.allowed) {
      t.equal(grouped.result.status.code, one.result.status.code, `${what}: the same code`);
      for (const entry of one.denying) t.match(grouped.result.status.message, `${entry}: `, `${what}: the message names ${entry}, which denied`);
    }
    t.same([...grouped.result.warnings].sort(), [...one.result.warnings].sort(), `${what}: the same warnings`);
    t.same(annotationsByEntry(grouped.result.auditAnnotations, true), annotationsByEntry(one.result.auditAnnotations, false), `${what}: the same audit annotations, by entry`);
    t.ok(grouped.calls <= groups.length, `${what}: ${grouped.calls} calls grouped (${one.calls} one by one)`);
  }
  const oneByOne = await admit(loaded.webhooks, podRequest({ team: 'a', owner: 'x' }));
  const grouped = await admit(groups, podRequest({ team: 'a', owner: 'x' }));
  t.equal(oneByOne.calls, 8, 'one by one: a call per entry whose selectors take the request (team-b-cost-center and gpu-quota do not)');
  t.equal(grouped.calls, 3, 'grouped: mutating, validating Fail, validating Ignore');
});

const allow = () => ({ allowed: true as const });

async function post(path: string, body: Record<string, unknown> = podReview()) {
  const result = await request(served.port, path, body, { ca: ca.certPem });
  return { ...result, review: result.json as ReviewResponse };
}

t.test("each member's own failurePolicy answers its own errors; the others still answer; the first denial's code", async (t) => {
  const throws = validating('throws', () => {
    throw new Error('boom');
  });
  const denies = validating('denies', () => ({ allowed: false, message: 'no team label' }));
  const ignoring = validating('ignoring', () => {
    throw new Error('bang');
  }, { failurePolicy: 'Ignore' });
  const warns = validating('warns', () => ({ allowed: true, warnings: ['careful'], auditAnnotations: { 'policy-violation': 'x' } }), { failurePolicy: 'Ignore' });
  served.registry.replace([throws, denies, ignoring, warns]);

  const first = await post('/validate/validating-fail-t10/throws.denies');
  t.equal(first.status, 200);
  t.same(first.review.response.status, {
    code: 500,
    reason: 'InternalError',
    message: 'webhook "throws" failed with an internal error (failurePolicy Fail); denies: no team label',
    status: 'Failure',
  });
  const other = await post('/validate/validating-fail-t10/denies.throws');
  t.equal(other.review.response.status?.code, 403, 'the first denial in entry order gives the code');

  const open = await post('/validate/validating-ignore-t10/ignoring.warns');
  t.equal(open.review.response.allowed, true);
  t.same(open.review.response.warnings, ['webhook "ignoring" failed with an internal error; allowed by failurePolicy Ignore', 'careful']);
  t.same(open.review.response.auditAnnotations, { 'ignoring.failed-open': 'error', 'warns.policy-violation': 'x' }, 'keys named by member: kube-apiserver records them under the group');
});

t.test("each member has its own time budget inside the call's deadline", async (t) => {
  const slow = validating('slow', (_r, context) => new Promise((resolve) => context.signal.addEventListener('abort', () => resolve({ allowed: true }))), { timeoutSeconds: 1 });
  const quick = validating('quick', () => ({ allowed: false, message: 'quick says no' }), { timeoutSeconds: 10 });
  served.registry.replace([slow, quick]);
  const started = performance.now();
  const answer = await post('/validate/validating-fail-t10/slow.quick?timeout=10s');
  const ms = performance.now() - started;
  t.ok(ms >= 900 && ms < 8000, `answered after ${Math.round(ms)} ms: the slow member's 1 s, not the call's 10 s`);
  t.same(answer.review.response.status?.message, 'webhook "slow" could not decide in time (failurePolicy Fail); quick: quick says no');
});

t.test('mutating members run in entry order on the object as the earlier ones patched it: one patch; a denial stops the rest', async (t) => {
  const order: string[] = [];
  const addTeam = mutating('add-team', (r) => {
    order.push('add-team');
    r.object!.metadata!.labels = { ...r.object!.metadata!.labels, team: 'a' };
    return { allowed: true, object: r.object! };
  });
  const copyTeam = mutating('copy-team', (r) => {
    order.push('copy-team');
    const labels = r.object!.metadata!.labels ?? {};
    return { allowed: true, object: { ...r.object!, metadata: { ...r.object!.metadata, labels: { ...labels, 'team-copy': labels['team'] ?? 'none' } } } };
  });
  const onlyTeamA = mutating('only-team-a', (r) => {
    order.push('only-team-a');
    r.object!.metadata!.annotations = { seen: 'team-a' };
    return { allowed: true, object: r.object! };
  }, { objectSelector: { matchLabels: { team: 'a' } } });
  const refuses = mutating('refuses', () => ({ allowed: false, message: 'mutation refused' }));
  const never = mutating('never', () => {
    order.push('never');
    return { allowed: true };
  });
  served.registry.replace([addTeam, copyTeam, onlyTeamA, refuses, never]);

  const answer = await post('/mutate/mutating-fail-t10/add-team.copy-team.only-team-a');
  t.same(order, ['add-team', 'copy-team', 'only-team-a'], 'in order; the objectSelector is matched against the patched object');
  const original = podReview().request as { object: KubeObject };
  const patched = await applyWebhookPatch('group', original.object, JSON.stringify(decodePatch(answer.review.response.patch)), { version: 'v1', kind: 'Pod' });
  t.same(patched?.metadata?.labels, { app: 'web', team: 'a', 'team-copy': 'a' }, "the double applies the one patch: each member's change");
  t.same(patched?.metadata?.annotations, { seen: 'team-a' });

  order.length = 0;
  const denied = await post('/mutate/mutating-fail-t10/add-team.refuses.never');
  t.same(order, ['add-team'], 'nothing runs after a denial, as kube-apiserver stops its chain');
  t.same({ allowed: denied.review.response.allowed, patch: denied.review.response.patch, message: denied.review.response.status?.message }, { allowed: false, patch: undefined, message: 'refuses: mutation refused' });
});

t.test("a member's patch is sent as it made it: a later member's changes to what it added are not written into it", async (t) => {
  // fast-json-patch inserts an add's value by reference: applied in place, the next member's
  // patch would edit the first one's value too, and kube-apiserver would apply that change twice.
  const sidecar = mutating('sidecar', (r) => {
    (r.object!.spec as { containers: object[] }).containers.push({ name: 'proxy', image: 'envoy', env: [{ name: 'A', value: '1' }] });
    return { allowed: true, object: r.object! };
  });
  const envEverywhere = mutating('env-everywhere', (r) => {
    for (const container of (r.object!.spec as { containers: Array<{ env?: object[] }> }).containers) (container.env ??= []).push({ name: 'B', value: '2' });
    return { allowed: true, object: r.object! };
  });
  served.registry.replace([sidecar, envEverywhere]);
  const answer = await post('/mutate/mutating-fail-t10/sidecar.env-everywhere');
  const patch = decodePatch(answer.review.response.patch) as object[];
  t.same(patch[0], { op: 'add', path: '/spec/containers/1', value: { name: 'proxy', image: 'envoy', env: [{ name: 'A', value: '1' }] } }, "the sidecar's operation as it made it");
  const original = podReview().request as { object: KubeObject };
  const patched = await applyWebhookPatch('group', original.object, JSON.stringify(patch), { version: 'v1', kind: 'Pod' });
  t.same(
    (patched?.spec as { containers: Array<{ name: string; env?: unknown }> }).containers.map((c) => [c.name, c.env]),
    [
      ['c', [{ name: 'B', value: '2' }]],
      ['proxy', [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]],
    ],
    'the double applies the one patch: each change once',
  );
});

t.test('reinvocationPolicy IfNeeded: a member is run again when a later member changed the object', async (t) => {
  const calls: string[] = [];
  const reinvoked = { reinvocationPolicy: 'IfNeeded' as const };
  const mirror = mutating('mirror', (r) => {
    calls.push('mirror');
    const labels = r.object!.metadata!.labels ?? {};
    if (labels['size'] && !labels['size-copy']) r.object!.metadata!.labels = { ...labels, 'size-copy': labels['size'] };
    return { allowed: true, object: r.object! };
  }, reinvoked);
  const size = mutating('size', (r) => {
    calls.push('size');
    r.object!.metadata!.labels = { ...r.object!.metadata!.labels, size: 'small' };
    return { allowed: true, object: r.object! };
  }, reinvoked);
  served.registry.replace([mirror, size]);
  const answer = await post('/mutate/mutating-fail-t10-reinvoke/mirror.size');
  t.same(calls, ['mirror', 'size', 'mirror'], 'mirror ran again after size changed the object');
  const original = podReview().request as { object: KubeObject };
  const patched = await applyWebhookPatch('group', original.object, JSON.stringify(decodePatch(answer.review.response.patch)), { version: 'v1', kind: 'Pod' });
  t.same(patched?.metadata?.labels, { app: 'web', size: 'small', 'size-copy': 'small' });

  calls.length = 0;
  await post('/mutate/mutating-fail-t10/mirror.size');
  t.same(calls, ['mirror', 'size'], 'a group registered Never is not');
});

t.test('members this replica does not know: not served in an Ignore group; in a Fail group the lifecycle decides, and "retry" is a 503', async (t) => {
  const known = validating('known', () => ({ allowed: false, message: 'known says no' }), { failurePolicy: 'Ignore' });
  served.registry.replace([known]);
  const open = await post('/validate/validating-ignore-t10/known.added-later');
  t.equal(open.review.response.allowed, false, 'the known member still answers');
  t.same(open.review.response.warnings, ['this replica does not serve "added-later" (yet or any more); allowed']);

  const judged: string[][] = [];
  const strict = await serve([known], { ca, unknownEntries: { decide: (_type, names) => (judged.push([...names]), 'retry') } });
  t.teardown(() => strict.server.close(2000));
  const retry = await request(strict.port, '/validate/validating-fail-t10/known.added-later', podReview(), { ca: ca.certPem });
  t.same(judged, [['added-later']]);
  t.equal(retry.status, 503);
  t.equal(retry.headers['retry-after'], '0', 'kube-apiserver retries at once');
  t.equal(retry.headers['connection'], 'close', 'on a new connection: through the Service, most likely another replica');
  t.match(retry.json, { kind: 'Status', status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: /does not run "added-later"/ });
  const ignore = await request(strict.port, '/validate/validating-ignore-t10/known.added-later', podReview(), { ca: ca.certPem });
  t.equal(ignore.status, 200, 'an Ignore group never asks: its members fail open anyway');
  t.same(judged.length, 1);
});

t.test('a name this replica does not run, which the lifecycle says is defined as one it runs (a rename), is answered by that one', async (t) => {
  const calls: string[] = [];
  const renamed = validating('require-team-r1', () => (calls.push('require-team-r1'), { allowed: false, message: 'missing label "team"' }));
  const other = validating('deny-privileged', () => (calls.push('deny-privileged'), { allowed: true }));
  const asked: string[] = [];
  const renames = await serve([other, renamed], {
    ca,
    unknownEntries: {
      decide: () => 'retry',
      sameEntry: (type, name) => (asked.push(`${type}/${name}`), name === 'require-team' ? renamed : undefined),
    },
  });
  t.teardown(() => renames.server.close(2000));
  const grouped = await request(renames.port, '/validate/validating-fail-t5/deny-privileged.require-team', podReview(), { ca: ca.certPem });
  t.equal(grouped.status, 200, 'answered, not retried');
  t.match(grouped.json, { response: { allowed: false, status: { message: /require-team-r1: missing label "team"/ } } }, 'the old name denied by its renamed rule');
  t.same((grouped.json as { response: { warnings?: string[] } }).response.warnings ?? [], [], 'no "not served" warning');
  t.same(calls, ['deny-privileged', 'require-team-r1']);
  const own = await request(renames.port, '/validate/require-team', podReview(), { ca: ca.certPem });
  t.match(own.json, { response: { allowed: false, status: { message: /missing label "team"/ } } }, 'on its own path (grouping none) too');
  calls.length = 0;
  const both = await request(renames.port, '/validate/validating-fail-t5/require-team.require-team-r1', podReview(), { ca: ca.certPem });
  t.equal(both.status, 200);
  t.same(calls, ['require-team-r1'], 'a path naming both names runs the rule once');
  t.same(asked, ['validating/require-team', 'validating/require-team', 'validating/require-team'], 'asked only for the names it does not run');
  const unknown = await request(renames.port, '/validate/validating-fail-t5/deny-privileged.added-later', podReview(), { ca: ca.certPem });
  t.equal(unknown.status, 503, 'a name defined like none it runs: judged as before');
});

t.test('metrics count each member that ran under its own name and time the call under the group; the log line names the members and who denied', async (t) => {
  const a = validating('counted-a', () => ({ allowed: false, message: 'a says no' }));
  const b = validating('counted-b', allow);
  const skipped = validating('counted-skipped', allow, { objectSelector: { matchLabels: { never: 'true' } } });
  served.registry.replace([a, b, skipped]);
  await post('/validate/validating-fail-t10/counted-a.counted-b.counted-skipped');
  const text = await served.metricsRegistry.metrics();
  t.match(text, /kube_admission_requests_total\{webhook="counted-a",operation="CREATE",decision="denied"\} 1/);
  t.match(text, /kube_admission_requests_total\{webhook="counted-b",operation="CREATE",decision="allowed"\} 1/);
  t.notMatch(text, /webhook="counted-skipped"/, 'a member whose objectSelector leaves the request out is not counted');
  t.match(text, /kube_admission_request_duration_seconds_count\{webhook="validating-fail-t10"\} \d+/);
  const line = served.logs.lines.findLast((l) => l['msg'] === 'admission review' && l['webhook'] === 'validating-fail-t10');
  t.match(line, { decision: 'denied', decidedBy: 'counted-a', entries: [{ entry: 'counted-a', decision: 'denied' }, { entry: 'counted-b', decision: 'allowed' }] });
});

t.test('paths: a long member list is served; a malformed one is a 404', async (t) => {
  const many: Webhook[] = Array.from({ length: 40 }, (_, i) => validating(`a-rule-with-a-rather-long-name-number-${i}`, allow));
  const group: WebhookGroup = groupWebhooks(many)[0]!;
  served.registry.replace(many, [group]);
  const long = await post(webhookPath(group));
  t.equal(long.status, 200);
  t.equal(long.review.response.allowed, true);
  t.ok(webhookPath(group).length > 1500, `a ${webhookPath(group).length}-character path`);
  t.equal((await post('/validate/validating-fail-t10/a..b')).status, 404);
  t.equal((await post('/validate/validating-fail-t10/Upper')).status, 404);
  t.equal((await post('/validate/not-a-group/a')).status, 404, 'only a group name takes members');
  await sleep(0);
});

t.test('group names from the URL that this replica does not register are capped as metric labels', async (t) => {
  served.registry.replace([validating('capped', allow)]);
  for (let i = 0; i < 40; i++) {
    const invented = `validating-fail-t5-${i.toString(16).padStart(10, '0')}`;
    t.equal((await post(`/validate/${invented}/capped`, { apiVersion: 'v1', kind: 'Pod' })).status, 400);
  }
  const text = await served.metricsRegistry.metrics();
  t.match(text, /kube_admission_requests_total\{webhook="_other",operation="",decision="invalid"\} \d+/, 'past the cap they share one label');
  t.notMatch(text, /webhook="validating-fail-t5-0000000027"/, 'the 40th invented name has no series of its own');
});
