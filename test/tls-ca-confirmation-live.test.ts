/**
 * Generate mode against the Kubernetes API test double: a CA rollover moves the served leaf to
 * the new CA only once the live webhook configurations, read back from the API, trust it.
 */
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { createKubeApi, loadKubeConfig } from '../src/kube/client.js';
import { configurationApis } from '../src/registration/configuration-api.js';
import { desiredConfigurations } from '../src/registration/desired-configurations.js';
import { ConfigurationReconciler } from '../src/registration/reconciler.js';
import { registerWebhookConfigurations } from '../src/registration/register.js';
import { kubeSecretApi } from '../src/lifecycle/kube-secret-api.js';
import { liveTrustedCas } from '../src/registration/trusted-cas.js';
import { createGeneratedMaterial } from '../src/tls/factory.js';
import { servingSans } from '../src/tls/sans.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { ClusterHarness, NAME, NAMESPACE } from './support/kube/cluster-harness.js';
import { servedBy } from './support/tls/served-certificate.js';
import { startHttpsServer } from './support/tls/tls-https.js';
import { capturingLogger, makeCa, makeLeaf, metricsProbe, nextEvent } from './support/tls/tls-fixtures.js';

const HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });
const SECRET = `${NAME}-certs`;
const KINDS = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'] as const;
const WEBHOOKS = [
  { name: 'labels', type: 'mutating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], failurePolicy: 'Ignore', sideEffects: 'None', timeoutSeconds: 5, matchPolicy: 'Equivalent' },
  { name: 'privileged', type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }], failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 5, matchPolicy: 'Equivalent' },
] as const;

// Judged with node alone: which CAs a bundle holds, and which of them signed a certificate.
const fingerprints = (pem: string): string[] =>
  (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((block) => new X509Certificate(block).fingerprint256);
const signedBy = (cert: X509Certificate, caPem: string): boolean => {
  const ca = new X509Certificate(caPem);
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
};

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms).unref())]);
}

t.test('a CA rollover: the old leaf is served while the PUT is held; leader and follower move once the live configurations show the new CA', async (t) => {
  const cluster = await ClusterHarness.start(t);
  const api = createKubeApi(loadKubeConfig({ kubeconfig: cluster.kubeconfig, inCluster: false }));
  const apis = configurationApis(api);
  const store = cluster.api.store;

  // What the previous leader left: a CA 20 days from expiry (inside its 30-day rollover window),
  // its leaf, and configurations that trust that CA alone.
  const ca1 = await makeCa(new Date(), 20, 'ca one');
  const leaf1 = await makeLeaf(ca1, SANS, new Date(), 15);
  store.put('secrets', {
    metadata: { name: SECRET, namespace: NAMESPACE, labels: { 'app.kubernetes.io/managed-by': 'kube-admission-server' } },
    type: 'kubernetes.io/tls',
    data: Object.fromEntries(
      Object.entries({ 'ca.crt': ca1.certPem, 'ca.key': ca1.keyPem, 'tls.crt': leaf1.certPem, 'tls.key': leaf1.keyPem, 'ca-bundle.crt': ca1.certPem }).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
  } as never);
  const desired = (caBundlePem: string) =>
    desiredConfigurations({ configName: NAME, serviceName: NAME, namespace: NAMESPACE, caBundlePem, webhooks: WEBHOOKS as never, excludedNamespaces: ['kube-system'] });
  const silent = capturingLogger().logger;
  await registerWebhookConfigurations(apis, desired(ca1.certPem), { signal: AbortSignal.timeout(10_000), logger: silent, install: { service: { name: NAME, namespace: NAMESPACE } } });
  const liveFingerprints = (): string[][] =>
    KINDS.flatMap((kind) =>
      ((store.get(kind, undefined, NAME)?.['webhooks'] as { clientConfig: { caBundle: string } }[] | undefined) ?? []).map((w) =>
        fingerprints(Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8')),
      ),
    );

  // kube-apiserver holds every update of the configurations.
  for (const resource of KINDS) cluster.api.faults.add({ resource, verb: 'update' }, { hang: true });

  /** One replica: the generate-mode source on the shared Secret, reading the live configurations, serving over TLS. */
  async function replica(name: string) {
    const log = capturingLogger();
    const source = createGeneratedMaterial({
      serviceName: NAME,
      namespace: NAMESPACE,
      extraSans: [],
      local: false,
      certDir: '/nonexistent',
      secretApi: kubeSecretApi(api, NAMESPACE),
      trustedCas: liveTrustedCas(apis, NAME),
      caConfirmPollMs: 100,
      // A timer-based move would happen within half a second; the held PUT lasts far longer.
      caPropagationMs: 500,
      checkIntervalMs: 10 * 60_000,
      caValidityDays: 100,
      caRenewBeforeDays: 30,
      leafValidityDays: 20,
      leafRenewBeforeDays: 5,
      logger: log.logger.child({ replica: name }),
      metrics: metricsProbe().metrics,
    });
    const material = await source.load(AbortSignal.timeout(20_000));
    const https = await startHttpsServer(material);
    t.teardown(() => https.close());
    const moves: { liveAtMove: string[][]; material: ServingMaterial }[] = [];
    source.on('serving-change', (next) => {
      moves.push({ liveAtMove: liveFingerprints(), material: next });
      https.server.setSecureContext({ key: next.keyPem, cert: next.certPem });
    });
    source.start(AbortSignal.timeout(120_000));
    t.teardown(() => source.stop());
    const served = async (): Promise<X509Certificate> =>
      (await withTimeout(servedBy(https.port, HOST, source.current().caBundlePem), 5_000, `${name}'s served certificate`)).served;
    return { source, moves, served };
  }

  const leader = await replica('leader');
  const follower = await replica('follower');
  const bundle = leader.source.current().caBundlePem;
  const [, ca2Fingerprint] = fingerprints(bundle);
  t.same(fingerprints(bundle), [new X509Certificate(ca1.certPem).fingerprint256, ca2Fingerprint], 'the rollover published CA1 + CA2');
  t.equal(follower.source.current().caBundlePem, bundle, 'the follower read the same bundle from the Secret');

  // The leader's reconciler pushes the new bundle; its PUTs hang.
  const reconcile = new AbortController();
  t.teardown(() => reconcile.abort());
  const reconciler = new ConfigurationReconciler({
    apis,
    kubeConfig: api.kubeConfig,
    configName: NAME,
    install: { service: { name: NAME, namespace: NAMESPACE } },
    desired: async () => desired(leader.source.current().caBundlePem),
    resyncPeriodMs: 60_000,
    logger: silent,
  });
  reconciler.start(reconcile.signal);
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === KINDS[1], { phase: 'started', timeoutMs: 10_000 });
  // Two seconds: four times the propagation time a timer would wait, twenty confirmation polls.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  for (const [name, r] of [['leader', leader], ['follower', follower]] as const) {
    t.same(r.moves, [], `${name}: no move while the PUT is held`);
    t.ok(signedBy(await r.served(), ca1.certPem), `${name}: still serves the leaf of CA1`);
  }
  t.ok(liveFingerprints().every((bundleHeld) => !bundleHeld.includes(ca2Fingerprint!)), 'the live configurations do not show CA2 yet');

  // kube-apiserver answers again: the PUT lands, the replicas read it back and move.
  const leaderMoved = nextEvent<[ServingMaterial]>(leader.source, 'serving-change', 30_000);
  const followerMoved = nextEvent<[ServingMaterial]>(follower.source, 'serving-change', 30_000);
  cluster.api.faults.clear();
  await Promise.all([leaderMoved, followerMoved]);
  for (const [name, r] of [['leader', leader], ['follower', follower]] as const) {
    t.equal(r.moves.length, 1, `${name}: moved once`);
    t.ok(r.moves[0]!.liveAtMove.length === 2 && r.moves[0]!.liveAtMove.every((held) => held.includes(ca2Fingerprint!)), `${name}: the live configurations showed CA2 when it moved`);
    const served = await r.served();
    t.equal(new X509Certificate(leaf1.certPem).serialNumber === served.serialNumber, false, `${name}: a new leaf`);
    const [, ca2Pem] = r.moves[0]!.material.caBundlePem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    t.ok(ca2Pem && signedBy(served, ca2Pem), `${name}: serves a leaf signed by CA2`);
  }
  t.same(fingerprints(leader.source.current().caBundlePem), fingerprints(bundle), 'CA1 stays published until it expires');
});
