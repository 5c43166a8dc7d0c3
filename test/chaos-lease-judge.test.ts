// The chaos engine's I4 oracle on a Lease left by a holder that is gone: a candidate measures the
// lease duration from when it first sees the record (client-go's rule), so "a ready replica could
// take it" runs from when one is ready, not from the holder's death. After a scale to zero (the
// exiting leader's release refused by a 5xx burst), the new replicas cannot take it sooner (seed
// 104's report); a replica ready for longer than the bound while the Lease names the dead holder is
// a violation. Judged on a stand-in world: the Lease in a store, Pods as the kubelet reports them.
import t from 'tap';
import type { KubeObject } from '../local-cluster/util/kube-object.js';
import { Ledger } from './support/chaos/explore/invariants/ledger.js';
import { ProcessJudge } from './support/chaos/explore/invariants/processes.js';
import type { CallJudge } from './support/chaos/explore/invariants/calls.js';
import type { LagMonitor } from './support/chaos/explore/lag-monitor.js';
import type { World } from './support/chaos/explore/world.js';

const BOUND_MS = 200;

function readyPod(name: string, pid: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'kube-admission-server' },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ containerID: `process://${pid}`, state: { running: {} }, ready: true }],
    },
  } as KubeObject;
}

function stage() {
  let pods: KubeObject[] = [];
  const world = { cluster: { kubelet: { exits: [] } }, pods: () => pods, leaseHolder: () => 'kas-gone' } as unknown as World;
  const ledger = new Ledger(() => 0, () => undefined);
  const judge = new ProcessJudge(world, ledger, { sigtermToExitMs: 10_000, leaseTakeoverMs: BOUND_MS }, {} as LagMonitor, {} as CallJudge);
  return { judge, ledger, setPods: (next: KubeObject[]) => (pods = next) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a replica that just became ready is given the bound; one ready for longer than it is a violation', async (t) => {
  const { judge, ledger, setPods } = stage();
  judge.check(); // the holder is gone, no replica runs (scaled to zero)
  await sleep(BOUND_MS * 2);
  judge.check();
  t.equal(ledger.counts.I4, 0, 'nobody could take it: no violation');
  setPods([readyPod('kas-new', 4242)]);
  judge.check();
  t.equal(ledger.counts.I4, 0, 'a replica ready a moment ago has not had its lease duration yet');
  await sleep(BOUND_MS * 2);
  judge.check();
  t.equal(ledger.counts.I4, 1, 'ready for longer than the bound while the Lease names the dead holder');
  t.match(ledger.kept[0]?.what, /still names kas-gone/);
});

t.test('while the API refuses the server (an outage, a 429 or 5xx burst) nobody can take it: the bound runs from its end', async (t) => {
  const { judge, ledger, setPods } = stage();
  setPods([readyPod('kas-standby', 4444)]);
  const answering = judge.apiRefusing();
  judge.check();
  await sleep(BOUND_MS * 2);
  judge.check();
  t.equal(ledger.counts.I4, 0, 'the standby could not read the Lease: no violation (seeds 9302 and 9303 reported one)');
  answering();
  judge.check();
  t.equal(ledger.counts.I4, 0, 'the API answers again a moment ago: the standby has not had its lease duration yet');
  await sleep(BOUND_MS * 2);
  judge.check();
  t.equal(ledger.counts.I4, 1, 'ready and answered for longer than the bound while the Lease names the dead holder');
});

t.test('a replica ready all along: the bound runs from the holder\'s death', async (t) => {
  const { judge, ledger, setPods } = stage();
  setPods([readyPod('kas-standby', 4343)]);
  judge.check();
  t.equal(ledger.counts.I4, 0);
  await sleep(BOUND_MS * 2);
  judge.check();
  t.equal(ledger.counts.I4, 1, 'the standby could have taken it');
});
