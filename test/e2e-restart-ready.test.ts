/**
 * Ready after a restart, the compiled server against the API double (three kube-apiservers): the
 * propagation grace counts from when the live caBundles took the served CA, and a restarted
 * process may know that moment from the API itself (managedFields times against the answer's
 * Date, both on the control plane's clock) instead of from its own first look.
 *
 * The double's clock stands in for time: shifted ahead after the registration, a minute of the
 * configurations' life passes without the test waiting it. An hour behind this pod's clock, a
 * write of moments ago would look an hour old to a comparison with the pod's clock; set back a
 * little more after the write, it stays "moments ago" by the control plane's clock however long
 * this busy machine takes to start the process. What the server did is read from its log lines:
 * whether it waited, and for how long the live bundles had trusted its chain when it turned Ready.
 */
import t, { type Test } from 'tap';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { ClusterHarness, NAME, type Replica } from './support/kube/cluster-harness.js';
import { logTimeMs, type LogLine } from './support/server/child-server.js';

/** The server's propagation grace (src/registration/propagation-grace.ts), as the behaviour to check. */
const GRACE_MS = 3000;
const CLOCK_SLACK_MS = 20;
const HOUR_MS = 3_600_000;
const WAITING = 'the live caBundles trust the served certificate only since moments ago; waiting for every kube-apiserver to see them';
const TRUSTED = 'trusted by the live webhook configurations';

const waited = (replica: Replica): LogLine | undefined => replica.child.logs.find((l) => l['reason'] === WAITING);

/** A fresh install's first replica, Ready, then stopped with SIGTERM; its configurations stay (the Deployment wants it). */
async function installed(t: Test): Promise<{ cluster: ClusterHarness; first: Replica }> {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const first = await cluster.startReplica(t, 'kas-a');
  t.equal((await first.child.stop('SIGTERM')).code, 0, 'the first replica exits cleanly');
  t.ok(cluster.configuration('mutating') && cluster.configuration('validating'), 'and leaves both configurations registered');
  return { cluster, first };
}

t.test('first start: the first registration makes the replica Ready without the grace', async (t) => {
  const { first } = await installed(t);
  t.ok(first.child.logs.some((l) => l.msg === 'webhook configurations registered'), 'it registered both');
  t.equal(waited(first), undefined, 'no kube-apiserver can hold an older bundle of a configuration that did not exist: no wait');
});

t.test('a restart whose configurations the API shows unwritten for longer than the grace is Ready without waiting it', async (t) => {
  const { cluster } = await installed(t);
  cluster.api.store.clock.shift(60_000); // a minute of the configurations' life passes on the control plane
  const restarted = await cluster.startReplica(t, 'kas-a');
  t.equal(waited(restarted), undefined, 'it did not wait the grace');
  const registered = restarted.child.logs.find((l) => l.msg === 'webhook configurations registered');
  t.same(registered?.['outcomes'], { mutating: 'unchanged', validating: 'unchanged' }, 'the leader found both as wanted and wrote nothing');
  const trusted = await restarted.child.waitForMessage(TRUSTED);
  t.ok(Number(trusted['trustedForMs']) >= GRACE_MS, `Ready with the live bundles trusting its chain for ${String(trusted['trustedForMs'])} ms, longer than the process has seen them`);
});

t.test('a restart after the configurations were force-replaced moments ago, by the control plane\'s clock, waits the grace', async (t) => {
  const { cluster } = await installed(t);
  cluster.api.store.clock.shift(-HOUR_MS); // the control plane's clock an hour behind this pod's
  // A GitOps tool's force-replace of both: delete, then create the same object anew (new managedFields).
  for (const kind of ['mutating', 'validating'] as const) {
    const path = `/apis/admissionregistration.k8s.io/v1/${kind}webhookconfigurations`;
    const stored = cluster.configuration<KubeObject>(kind)!;
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _created, managedFields: _managed, generation: _generation, ...metadata } = stored.metadata!;
    t.equal((await rawRequest(cluster.api, 'DELETE', `${path}/${NAME}`)).status, 200, `${kind}: deleted`);
    t.equal((await rawRequest(cluster.api, 'POST', `${path}?fieldManager=argocd-controller`, { body: { ...stored, metadata } })).status, 201, `${kind}: created anew`);
  }
  cluster.api.store.clock.shift(-300_000); // and the write stays moments old by it, however long the start takes

  const restarted = await cluster.startReplica(t, 'kas-a');
  const waiting = waited(restarted);
  t.ok(waiting, 'it waited the grace: the API shows the bundle written moments ago');
  if (!waiting) return;
  const trusted = await restarted.child.waitForMessage(TRUSTED);
  const afterMs = logTimeMs(trusted) - logTimeMs(waiting);
  t.ok(Number(waiting['waitMs']) >= GRACE_MS - CLOCK_SLACK_MS, `the whole grace from its first look (${String(waiting['waitMs'])} ms)`);
  t.ok(afterMs >= GRACE_MS - CLOCK_SLACK_MS, `Ready ${afterMs} ms after it began waiting`);
  t.ok(Number(trusted['trustedForMs']) >= GRACE_MS, `trusted for ${String(trusted['trustedForMs'])} ms when Ready`);
});
