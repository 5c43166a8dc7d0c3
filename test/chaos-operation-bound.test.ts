// The chaos engine's operations finish or end in a violation that says why, within their own
// bound: a scale to zero whose Pods never go (chaos seed 9191: the kubelet's final delete lost to
// an API outage) ends with I3 naming every Pod left and how it stands, and the Deployment is
// scaled back; an operation past its bound is stopped there, its wait named, counted once. Run on a
// stand-in cluster: the API double with the install's objects and no controller or kubelet, so
// nothing ever moves unless the operation moves it. The oracle is the double's store.
import t, { type Test } from 'tap';
import { startFakeApiServer, type KubeObject } from '../local-cluster/fake-apiserver/index.js';
import type { LocalCluster } from '../local-cluster/cluster/index.js';
import type { CallJudge } from './support/chaos/explore/invariants/calls.js';
import { Ledger } from './support/chaos/explore/invariants/ledger.js';
import type { ProcessJudge } from './support/chaos/explore/invariants/processes.js';
import type { OperationContext } from './support/chaos/explore/operations/context.js';
import { operationBoundMs, runOperation } from './support/chaos/explore/operations/run-operation.js';
import { PolicyHistory } from './support/chaos/explore/policy-history.js';
import { NAME, NS, POD_SELECTOR, World } from './support/chaos/explore/world.js';
import { EVENT_MS } from './support/deadline.js';

const WAIT_MS = 2000;

async function stage(t: Test) {
  const api = await startFakeApiServer({ namespaces: [NS] });
  const stop = new AbortController();
  t.teardown(async () => {
    stop.abort();
    await api.close();
  });
  const template = { metadata: { labels: POD_SELECTOR }, spec: { containers: [{ name: 'server', image: 'kube-admission-server:dev' }] } };
  api.store.put('deployments', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: NAME, namespace: NS, generation: 1 }, spec: { replicas: 2, selector: { matchLabels: POD_SELECTOR }, template }, status: { observedGeneration: 1 } });
  // Two Pods whose containers exited after SIGTERM, still terminating: no kubelet will remove them.
  for (const name of [`${NAME}-a`, `${NAME}-b`]) {
    const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, labels: POD_SELECTOR }, spec: template.spec, status: { containerStatuses: [{ name: 'server', state: { terminated: { exitCode: 0, reason: 'Completed' } } }] } };
    api.store.put('pods', pod);
    api.store.markDeleting('pods', NS, name, 15);
  }
  const ledger = new Ledger(() => 0, () => undefined);
  const world = new World({ api } as unknown as LocalCluster, 'files', stop.signal, (line) => t.comment(line));
  const ctx: OperationContext = { world, history: new PolicyHistory(), calls: {} as CallJudge, processes: {} as ProcessJudge, sizes: { scale: 0.01, waitMs: WAIT_MS } };
  const replicas = (): unknown => (api.store.get('deployments', NS, NAME)?.spec as { replicas?: number }).replicas;
  return { ctx, ledger, replicas };
}

t.test('a scale to zero whose Pods never go ends in I3 naming each Pod left, and scales back', async (t) => {
  const { ctx, ledger, replicas } = await stage(t);
  const op = { name: 'scale-to-zero-and-back' as const, params: { holdMs: 16_229 }, startMs: 0 };
  const began = performance.now();
  await runOperation(ctx, op, 0, ledger, 4);
  const tookMs = performance.now() - began;
  t.ok(tookMs < operationBoundMs(op, ctx.sizes) + EVENT_MS, `ended within its bound (${Math.round(tookMs)} ms)`);
  t.equal(ledger.counts.I3, 1, 'one violation');
  t.match(ledger.kept[0]?.what, /^step 4: scale-to-zero-and-back did not complete: not within 2 s: scaled to zero: every Pod gone \(kube-admission-server-a: terminating for \d+ s, container terminated \(exit 0\); kube-admission-server-b: /);
  t.equal(replicas(), 2, 'the Deployment scaled back to its replicas, as a person would');
});

t.test('an operation past its bound is stopped there, with the wait it was in named, and counted once', async (t) => {
  const { ctx, ledger } = await stage(t);
  const op = { name: 'rolling-update' as const, params: { revision: 7 }, startMs: 0 };
  t.equal(operationBoundMs(op, ctx.sizes), WAIT_MS, 'an operation that holds nothing on purpose: the wait bound');
  t.equal(operationBoundMs({ name: 'api-outage', params: { downMs: 30_000 } }, ctx.sizes), WAIT_MS + 300, 'an outage: the wait bound plus its length, scaled');
  const began = performance.now();
  await runOperation(ctx, op, 0, ledger, 2);
  const tookMs = performance.now() - began;
  t.ok(tookMs >= WAIT_MS && tookMs < WAIT_MS + EVENT_MS, `stopped at its bound (${Math.round(tookMs)} ms)`);
  t.equal(ledger.counts.I3, 1, 'counted once, at the bound');
  t.match(ledger.kept[0]?.what, /^step 2: rolling-update did not finish within its bound of 2 s: waiting for rolling update: the Deployment rolled out \(.+\)$/);
});
