// The wait before a configuration is created (EndpointGate) against the API double: it reads the
// Service's EndpointSlices as kube-proxy does, follows them with a watch, is bounded (past the
// bound it lets the create go on, with a warning), ends at once without the right to read them,
// and stops on its signal. The whole flow on a cluster: test/local-cluster-first-registration.test.ts.
import t, { type Test } from 'tap';
import { EndpointGate } from '../src/registration/endpoint-gate.js';
import { EVENT_MS, within } from './support/deadline.js';
import { startInProcessKube } from './support/kube/in-process-kube.js';
import { capturingLogger } from './support/tls/tls-fixtures.js';

const NS = 'kas';
const SERVICE = 'hook';

type Conditions = { ready?: boolean; terminating?: boolean } | undefined;

async function setup(t: Test, endpoints: Conditions[], options: { timeoutMs?: number } = {}) {
  const cluster = await startInProcessKube(t, NS);
  const slice = (conditions: Conditions[]) => ({
    metadata: { name: `${SERVICE}-x1`, namespace: NS, labels: { 'kubernetes.io/service-name': SERVICE } },
    addressType: 'IPv4',
    endpoints: conditions.map((c, i) => ({ addresses: [`10.244.0.${i + 1}`], ...(c ? { conditions: c } : {}) })),
    ports: [{ name: 'https', port: 8443, protocol: 'TCP' }],
  });
  cluster.api.store.put('endpointslices', slice(endpoints));
  // Another Service's ready endpoint must not count.
  cluster.api.store.put('endpointslices', { ...slice([{ ready: true }]), metadata: { name: 'other-x1', namespace: NS, labels: { 'kubernetes.io/service-name': 'other' } } });
  const log = capturingLogger();
  let servingCalls = 0;
  const gate = new EndpointGate({
    api: cluster.kube,
    service: { namespace: NS, name: SERVICE },
    serving: () => servingCalls++,
    logger: log.logger,
    propagationMs: 10,
    ...options,
  });
  const messages = (): string[] => log.lines.map((line) => String(line['msg']));
  return { cluster, gate, log, messages, servingCalls: () => servingCalls, update: (conditions: Conditions[]) => cluster.api.store.put('endpointslices', slice(conditions)) };
}

t.test('a ready endpoint (ready unset counts, as the API says) lets the create go on at once; the replica was made Ready first', async (t) => {
  const { gate, messages, servingCalls } = await setup(t, [{ ready: false, terminating: true }, undefined]);
  await within(EVENT_MS, 'the gate', gate.beforeCreate(AbortSignal.timeout(EVENT_MS)));
  t.equal(servingCalls(), 1, 'serving() before the wait');
  t.match(messages(), ['a webhook configuration is to be created: waiting for a ready endpoint of the Service first', 'the Service has a ready endpoint; creating the webhook configuration']);
});

t.test('no ready endpoint yet: waits, follows the slices with a watch, and goes on when one turns ready', async (t) => {
  const { cluster, gate, messages, update } = await setup(t, [{ ready: false }, { ready: false, terminating: true }], { timeoutMs: 60_000 });
  let settled = false;
  const waiting = gate.beforeCreate(AbortSignal.timeout(EVENT_MS)).then(() => (settled = true));
  await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'endpointslices', { phase: 'started', timeoutMs: EVENT_MS });
  await cluster.api.waitForRequest((r) => r.verb === 'list' && r.resource === 'endpointslices', { timeoutMs: EVENT_MS });
  t.notOk(settled, 'still waiting while no endpoint is ready');
  update([{ ready: false }, { ready: true }]);
  await within(EVENT_MS, 'the gate after the endpoint turned ready', waiting);
  t.match(messages().at(-1), 'the Service has a ready endpoint; creating the webhook configuration');
  const watches = cluster.api.requests.filter((r) => r.verb === 'watch' && r.resource === 'endpointslices');
  t.ok(watches.every((r) => r.path.includes('labelSelector=kubernetes.io%2Fservice-name%3Dhook') || r.path.includes('labelSelector=kubernetes.io/service-name=hook')), 'the watch selects the Service’s slices by label');
  await cluster.api.waitForRequest((r) => r.verb === 'watch' && r.resource === 'endpointslices' && r.endedAt !== undefined, { timeoutMs: EVENT_MS });
  t.pass('the watch is closed after the wait');
});

t.test('past the bound without a ready endpoint: the create goes on, with a warning', async (t) => {
  const { gate, log } = await setup(t, [{ ready: false }], { timeoutMs: 1500 });
  const started = performance.now();
  await within(EVENT_MS, 'the gate', gate.beforeCreate(AbortSignal.timeout(EVENT_MS)));
  t.ok(performance.now() - started >= 1400, 'it waited for the bound');
  t.match(log.lines.at(-1), { level: 40, msg: /no ready endpoint within the bound; creating the webhook configuration anyway/ });
});

t.test('without the right to read the slices (RBAC of an older install): no wait, a warning', async (t) => {
  const { cluster, gate, log } = await setup(t, [{ ready: false }], { timeoutMs: 60_000 });
  cluster.api.setRbac({ roles: [{ metadata: { namespace: NS }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }] });
  await within(EVENT_MS, 'the gate', gate.beforeCreate(AbortSignal.timeout(EVENT_MS)));
  t.match(log.lines.at(-1), { level: 40, msg: /cannot read the EndpointSlices of the Service/ });
});

t.test('both configurations at once share one wait; an abort ends it', async (t) => {
  const { cluster, gate, servingCalls } = await setup(t, [{ ready: false }], { timeoutMs: 60_000 });
  const stop = new AbortController();
  const first = gate.beforeCreate(stop.signal);
  const second = gate.beforeCreate(stop.signal);
  t.equal(first, second, 'one wait');
  await cluster.api.waitForRequest((r) => r.verb === 'list' && r.resource === 'endpointslices', { timeoutMs: EVENT_MS });
  stop.abort(new Error('shutting down'));
  await t.rejects(within(EVENT_MS, 'the aborted gate', first), { message: 'shutting down' });
  t.equal(servingCalls(), 1);
});
