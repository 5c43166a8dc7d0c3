/**
 * Policy entries renamed or removed while one kube-apiserver's cache lags longer than the
 * propagation grace (chaos seed 4242: kube-apiserver-2 4,972 ms behind, the grace 3 s). After the
 * leader's PUT has landed, that kube-apiserver still routes the old name for its lag, and the name
 * must be answered by the rule it named: on the replica that ran the rule (for the entry overlap,
 * not a fixed 3 s), and, for a rename, on a replica of the rollout that never ran it (started with
 * the renamed policy), by the rule it was renamed to, identical but for the name. Every unlabelled
 * Pod through the lagging kube-apiserver is denied: none allowed as "not served" (unchecked), none
 * refused by a failed call. The oracle is the API double's lagging kube-apiserver and its admission
 * caller: what it called and what it got.
 */
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { AdmissionCaller } from '../local-cluster/admission-caller/index.js';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { sleep } from '../local-cluster/util/waits.js';
import { ClusterHarness, POD_KIND, POD_RESOURCE, podFixture, type Replica } from './support/kube/cluster-harness.js';
import { EVENT_MS } from './support/deadline.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry, unservedWarning } from './support/policy/policy-text.js';

/** kube-apiserver-2's cache lag: above the 3 s grace the old handlers had, as the exploration draws it (1-5 s). */
const LAG_MS = 5000;
const LAGGING = 2;
/** The grace a retired name used to get: calls later than this after the PUT show the overlap. */
const OLD_GRACE_MS = 3000;

const OLD = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team'));
const RENAMED = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team-r1', 'team'));
const REMOVED = policyText(DENY_PRIVILEGED_ENTRY);

interface Answer {
  replica: string;
  /** performance.now() of the webhook call. */
  at: number;
  url: string;
  message: string;
  warnings: string[];
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The install on a control plane whose kube-apiserver-2 lags, the leader serving OLD from its own volume. */
async function install(t: Test, pods: string[]) {
  const cluster = await ClusterHarness.start(t, { apiservers: [{}, {}, { lagMs: LAG_MS }] });
  cluster.seedDeployment(pods);
  const volume = new AtomicWriter(join(cluster.dir, 'volume-leader'));
  await volume.write({ 'policy.yaml': OLD });
  const leader = await cluster.startReplica(t, pods[0]!, ['--policy-file', join(cluster.dir, 'volume-leader', 'policy.yaml')], { WATCH_POLL_INTERVAL: '300ms' });
  const lagging = cluster.api.apiservers[LAGGING]!;
  await waitFor('kube-apiserver-2 caught up with the registration', () => cluster.registeredValidatingPaths().some((p) => p.endsWith('.require-team')) && lagging.backlog === 0, LAG_MS + EVENT_MS);
  return { cluster, volume, leader };
}

/** Unlabelled Pods through kube-apiserver-2, to each replica in turn: one, then more until `untilMs` (performance.now()). */
async function callThroughLag(targets: readonly { name: string; caller: AdmissionCaller }[], untilMs: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i === 0 || performance.now() < untilMs; i++) {
    const { name, caller } = targets[i % targets.length]!;
    const before = caller.calls.length;
    const result = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE, apiserver: LAGGING });
    const call = caller.calls.slice(before).find((c) => c.phase === 'validating');
    answers.push({ replica: name, at: call?.startedAt ?? 0, url: call?.url ?? '', message: result.allowed ? 'allowed' : (result.status.message ?? ''), warnings: result.warnings });
    await sleep(20);
  }
  return answers;
}

function noneUnchecked(t: Test, answers: readonly Answer[]): void {
  t.same(answers.filter((a) => a.message === 'allowed'), [], 'every unlabelled Pod denied: the rule never went unchecked');
  t.same(answers.filter((a) => a.warnings.includes(unservedWarning('require-team'))), [], 'none answered "not served"');
  t.same(answers.filter((a) => /failed calling webhook/.test(a.message)), [], 'none refused by a failed call');
}

const oldNameCalls = (answers: readonly Answer[]): Answer[] => answers.filter((a) => /\.require-team\?/.test(a.url));

async function stopAll(t: Test, replicas: readonly Replica[]): Promise<void> {
  for (const replica of replicas) t.equal((await replica.child.stop()).code, 0, `${replica.podName} exits 0`);
}

t.test('a rename under a kube-apiserver lagging past the grace: the old name is answered by its rule on every replica', async (t) => {
  const { cluster, volume, leader } = await install(t, ['kas-old', 'kas-new']);
  // A pod of the rollout, started with the renamed policy: it never ran require-team.
  const freshVolume = new AtomicWriter(join(cluster.dir, 'volume-new'));
  await freshVolume.write({ 'policy.yaml': RENAMED });
  const fresh = await cluster.startReplica(t, 'kas-new', ['--policy-file', join(cluster.dir, 'volume-new', 'policy.yaml')], { WATCH_POLL_INTERVAL: '300ms' });
  const targets = [
    { name: 'kas-old', caller: cluster.caller(t, () => leader.port) },
    { name: 'kas-new', caller: cluster.caller(t, () => fresh.port) },
  ];
  const [first] = await callThroughLag(targets.slice(0, 1), 0);
  t.match(first?.message, /require-team.*missing label "team"/, 'require-team enforced before the rename');

  const renamedAt = performance.now();
  await volume.write({ 'policy.yaml': RENAMED });
  const put = await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > renamedAt && r.status === 200, { timeoutMs: EVENT_MS });
  const answers = await callThroughLag(targets, put.endedAt! + LAG_MS + 1000);

  const oldName = oldNameCalls(answers);
  t.ok(oldName.some((a) => a.replica === 'kas-new'), `the replica that never ran require-team was called for it (${oldName.filter((a) => a.replica === 'kas-new').length} calls)`);
  t.ok(oldName.some((a) => a.replica === 'kas-old' && a.at > put.endedAt! + OLD_GRACE_MS), 'the replica that ran it was called for it past the old 3 s grace');
  noneUnchecked(t, answers);
  t.same(answers.filter((a) => !/missing label "team"/.test(a.message)), [], 'each denied by the team rule, under its old name or its new one');
  t.match(answers.at(-1)?.message, /require-team-r1.*missing label "team"/, 'then kube-apiserver-2 calls the new name');
  await stopAll(t, [fresh, leader]);
});

t.test('a removal under a kube-apiserver lagging past the grace: the replica that ran the rule answers it for its whole lag', async (t) => {
  const { cluster, volume, leader } = await install(t, ['kas-old']);
  const targets = [{ name: 'kas-old', caller: cluster.caller(t, () => leader.port) }];
  const removedAt = performance.now();
  await volume.write({ 'policy.yaml': REMOVED });
  const put = await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > removedAt && r.status === 200, { timeoutMs: EVENT_MS });
  const answers = await callThroughLag(targets, put.endedAt! + LAG_MS - 500);

  const oldName = oldNameCalls(answers);
  t.ok(oldName.some((a) => a.at > put.endedAt! + OLD_GRACE_MS), `kube-apiserver-2 called the removed name past the old 3 s grace (${oldName.length} calls for it)`);
  noneUnchecked(t, oldName);
  t.same(oldName.filter((a) => !/require-team.*missing label "team"/.test(a.message)), [], 'each call for the removed name denied by its rule');
  await stopAll(t, [leader]);
});
