/**
 * Generate mode, "start over with a new CA" as docs/operations.md says (delete the Secret, then
 * new pods): the new pod makes a new CA, but is not Ready until every live caBundle has trusted it
 * for the propagation grace; the leader, watching the Secret, adds the new CA at once next to the
 * old one; the running replicas keep serving their old leaf until the bundle trusts the new CA,
 * then move to the shared new leaf. Under a steady admission load, through the current and the
 * slowest kube-apiserver, no call fails.
 */
import { X509Certificate } from 'node:crypto';
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { logTimeMs } from './support/server/child-server.js';
import { steadyAdmission } from './support/kube/steady-admission.js';
import { servedBy } from './support/tls/served-certificate.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SECRET = `${NAME}-certs`;
/** The server's propagation grace (src/registration/propagation-grace.ts), as the behaviour to check. */
const GRACE_MS = 3000;
/** The slowest kube-apiserver's cache lag: below the grace. */
const LAG_MS = 1500;
/** Clock readings of two processes on one machine, whole milliseconds. */
const CLOCK_SLACK_MS = 20;
const fingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256;

t.test('a new CA from a new pod: not Ready until the live caBundles trust it, the leader adds it at once, no call fails', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a', 'kas-b', 'kas-c']);
  const a = await cluster.startReplica(t, 'kas-a');
  await a.child.waitForMessage('registered as the leader');
  const b = await cluster.startReplica(t, 'kas-b');
  const secretData = (): Record<string, string> => (cluster.api.store.get('secrets', NAMESPACE, SECRET) as { data: Record<string, string> }).data;
  const decoded = (key: string): string => Buffer.from(secretData()[key]!, 'base64').toString('utf8');
  const ca1 = decoded('ca.crt');
  const leaf1Serial = new X509Certificate(decoded('tls.crt')).serialNumber;

  const pod = podFixture({ app: 'web' });
  const request = { operation: 'CREATE' as const, object: pod, kind: POD_KIND, resource: POD_RESOURCE };
  const load = steadyAdmission(t, [cluster.caller(t, () => a.port), cluster.caller(t, () => b.port), cluster.laggingCaller(t, () => a.port, LAG_MS), cluster.laggingCaller(t, () => b.port, LAG_MS)], request);

  // Start over: the Secret goes, a new pod starts and makes a new CA.
  cluster.api.store.delete('secrets', NAMESPACE, SECRET);
  const deletedAt = performance.now();
  const spawned = cluster.spawnReplica(t, 'kas-c');
  const created = await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'secrets' && r.startedAt > deletedAt && r.status === 201, { timeoutMs: STARTUP_MS });
  const ca2 = decoded('ca.crt');
  t.not(fingerprint(ca2), fingerprint(ca1), 'the new pod made a new CA');
  const leaf2Serial = new X509Certificate(decoded('tls.crt')).serialNumber;

  // The leader adds it within moments (not at its 10-minute check), and keeps the old one.
  for (const kind of ['mutating', 'validating'] as const) {
    await cluster.api.store.waitFor(`${kind}webhookconfigurations`, undefined, NAME, () => cluster.caBundleFingerprints(kind).every((bundle) => bundle.includes(fingerprint(ca2))), { timeoutMs: EVENT_MS });
  }
  const seenAt = performance.now();
  // The last write of a configuration that landed before every bundle was seen holding the new CA.
  // Sent before, and answered 200 or still in flight: the store changes before the response is written.
  const writes = cluster.api.requests.filter(
    (r) => (r.verb === 'update' || r.verb === 'patch') && r.resource?.endsWith('webhookconfigurations') && r.startedAt <= seenAt && (r.status === 200 || r.endedAt === undefined),
  );
  const put = writes.at(-1);
  if (!put) throw new Error(`no configuration write before the bundles held the new CA; requests: ${JSON.stringify(cluster.api.requests.slice(-20))}`);
  const trustedAt = performance.timeOrigin + put.startedAt;
  t.ok(put.startedAt - created.endedAt! < 30_000, `the new CA sent for registration ${Math.round(put.startedAt - created.endedAt!)} ms after the new Secret`);
  t.ok(cluster.bundlesHold([fingerprint(ca1), fingerprint(ca2)]), 'the old CA stays in every caBundle next to the new one');

  // The new pod turns Ready only a grace after every bundle holds its CA.
  const c = await ClusterHarness.ready(spawned);
  const ready = await c.child.waitForMessage('ready');
  t.ok(logTimeMs(ready) >= trustedAt + GRACE_MS - CLOCK_SLACK_MS, `kas-c Ready ${Math.round(logTimeMs(ready) - trustedAt)} ms after the bundles held its CA`);
  t.ok(c.child.logs.some((l) => l.msg === 'not trusted by the live webhook configurations yet; not ready'), 'and said why it waited');
  t.equal((await fetch(`http://127.0.0.1:${c.healthPort}/readyz`, { signal: AbortSignal.timeout(EVENT_MS) })).status, 200);

  // The running replicas move to the new shared leaf, each only a grace after the bundles trusted it.
  for (const replica of [a, b]) {
    const moved = await replica.child.waitForMessage('serving the new certificate: every live caBundle trusts its CA', EVENT_MS);
    t.ok(logTimeMs(moved) >= trustedAt + GRACE_MS - CLOCK_SLACK_MS, `${replica.podName} moved ${Math.round(logTimeMs(moved) - trustedAt)} ms after the bundles held the new CA`);
    t.equal((await servedBy(replica.port, HOST, ca2)).served.serialNumber, leaf2Serial, `${replica.podName} serves the new leaf`);
    t.not(leaf2Serial, leaf1Serial);
  }
  const viaC = cluster.caller(t, () => c.port);
  t.equal((await viaC.admit(request)).allowed, true, 'kube-apiserver verifies the new pod');
  const { admissions, failed } = await load.stop();
  t.ok(admissions > 10, `${admissions} rounds of admissions through both replicas and both kube-apiservers`);
  t.same(failed.map((f) => `${f.caller}: ${f.error}`), [], 'no webhook call failed');
  for (const replica of [c, b, a]) t.equal((await replica.child.stop()).code, 0);
});
