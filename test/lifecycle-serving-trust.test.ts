/**
 * ServingTrust: Ready and the served certificate follow what the live caBundles verify, with the
 * grace for kube-apiservers whose caches lag; material from test fixtures (made without src/).
 */
import { EventEmitter } from 'node:events';
import { X509Certificate } from 'node:crypto';
import t, { type Test } from 'tap';
import type { LiveSnapshot } from '../src/registration/live-configurations.js';
import { HOLD_MARGIN_MS, ServingTrust, type LiveSource } from '../src/lifecycle/serving-trust.js';
import type { ServingMaterial } from '../src/tls/types.js';
import { captureLogs } from './support/server/server-harness.js';
import { makeCa, makeLeaf, type CertificateAndKey } from './support/tls/tls-fixtures.js';

const SANS = { dnsNames: ['kas.ops.svc'], ipAddresses: [] };
const GRACE_MS = 200;

function material(leaf: CertificateAndKey, ca: CertificateAndKey): ServingMaterial {
  return {
    certPem: leaf.certPem,
    keyPem: leaf.keyPem,
    caBundlePem: ca.certPem,
    certNotAfter: new Date(new X509Certificate(leaf.certPem).validTo),
    caNotAfter: new Date(new X509Certificate(ca.certPem).validTo),
  };
}

const configuration = (bundlePems: readonly string[]) => ({ webhooks: bundlePems.map((pem) => ({ name: 'x', clientConfig: { caBundle: Buffer.from(pem).toString('base64') } })) });

/** A stand-in for LiveConfigurations: publish() is a new reading of the two configurations. */
class FakeLive extends EventEmitter implements LiveSource {
  snapshot: LiveSnapshot | undefined;
  publish(mutating: readonly string[] | undefined, validating: readonly string[] | undefined): void {
    this.snapshot = { mutating: mutating && configuration(mutating), validating: validating && configuration(validating) } as LiveSnapshot;
    this.emit('change', this.snapshot);
  }
}

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function start(t: Test, initial: ServingMaterial, live: FakeLive | undefined, wallClock?: () => number) {
  const served: ServingMaterial[] = [];
  const verified: string[][] = [];
  const logs = captureLogs();
  const readiness: { ready: boolean; at: number }[] = [];
  const trust = new ServingTrust(
    {
      serve: (m) => served.push(m),
      verify: async (bundles) => {
        verified.push([...bundles]);
      },
      graceMs: GRACE_MS,
      logger: logs.logger,
      ...(wallClock ? { wallClock } : {}),
    },
    initial,
  );
  trust.on('readiness', (ready) => readiness.push({ ready, at: performance.now() }));
  const lifetime = new AbortController();
  const running = trust.run(live, lifetime.signal);
  t.teardown(async () => {
    lifetime.abort();
    await running;
  });
  return { trust, served, verified, logs, readiness };
}

let ca1: CertificateAndKey, ca2: CertificateAndKey, leaf1: ServingMaterial, leaf2: ServingMaterial;
t.before(async () => {
  [ca1, ca2] = await Promise.all([makeCa(new Date(), 365, 'ca one'), makeCa(new Date(), 365, 'ca two')]);
  leaf1 = material(await makeLeaf(ca1, SANS), ca1);
  leaf2 = material(await makeLeaf(ca2, SANS), ca2);
});

t.test('nothing registered from this process: Ready at once, new material served at once', async (t) => {
  const { trust, served, verified } = start(t, leaf1, undefined);
  await until('ready', () => trust.ready);
  t.same(verified, [[ca1.certPem]], 'the handshake checked against its own bundle');
  trust.offer(leaf2);
  await until('served', () => served.length === 1);
  t.equal(served[0], leaf2);
});

t.test('a replica whose CA the live caBundles lack is not Ready; once they hold it, Ready after the grace', async (t) => {
  const live = new FakeLive();
  const { trust, verified, logs } = start(t, leaf2, live);
  live.publish([ca1.certPem], [ca1.certPem]);
  await until('the first verdict', () => logs.lines.some((l) => l['reason'] === 'the live caBundles do not trust the served certificate'));
  t.equal(trust.ready, false);
  t.same(verified, [], 'no handshake while untrusted');

  live.publish([ca1.certPem + ca2.certPem], [ca1.certPem]);
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
  t.equal(trust.ready, false, 'one webhook’s bundle still lacks it: not every kube-apiserver call would verify');

  const trustedAt = performance.now();
  live.publish([ca1.certPem + ca2.certPem], [ca2.certPem + ca1.certPem]);
  await trust.untilReady(AbortSignal.timeout(10_000));
  t.ok(performance.now() - trustedAt >= GRACE_MS - 5, `Ready ${Math.round(performance.now() - trustedAt)} ms after every bundle held the CA`);
  t.same(verified.at(-1)?.sort(), [ca1.certPem + ca2.certPem, ca2.certPem + ca1.certPem].sort(), 'a handshake with each distinct live bundle');

  live.publish([ca1.certPem], [ca1.certPem]);
  await until('not ready', () => !trust.ready);
  t.pass('the CA taken out of the live bundles: not Ready');
});

t.test('new material under a CA the live caBundles lack is held; the previous one is served until they trust it for the grace', async (t) => {
  const live = new FakeLive();
  live.publish([ca1.certPem], [ca1.certPem]);
  const { trust, served, logs } = start(t, leaf1, live);
  await trust.untilReady(AbortSignal.timeout(10_000));
  trust.offer(leaf2);
  await until('held', () => logs.lines.some((l) => l['msg'] === 'new certificate held: the live caBundles do not trust its CA yet; serving the previous one meanwhile'));
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
  t.same(served, [], 'still the previous certificate');
  t.equal(trust.ready, true, 'and still Ready on it');

  const pushedAt = performance.now();
  live.publish([ca1.certPem + ca2.certPem], [ca1.certPem + ca2.certPem]);
  await until('served', () => served.length === 1);
  t.equal(served[0], leaf2);
  t.ok(performance.now() - pushedAt >= GRACE_MS - 5, `moved ${Math.round(performance.now() - pushedAt)} ms after the bundles held the new CA`);
  t.equal(trust.served, leaf2);
  await until('ready on the new one', () => trust.ready);
});

t.test('a renewal under a CA trusted long since is served at once', async (t) => {
  const live = new FakeLive();
  live.publish([ca1.certPem], [ca1.certPem]);
  const { trust, served } = start(t, leaf1, live);
  await trust.untilReady(AbortSignal.timeout(10_000));
  const renewal = material(await makeLeaf(ca1, SANS), ca1);
  const offeredAt = performance.now();
  trust.offer(renewal);
  await until('served', () => served.length === 1);
  t.ok(performance.now() - offeredAt < GRACE_MS, 'no grace to wait: every kube-apiserver has trusted the CA for longer');
});

t.test('nothing registered yet, then the first registration: Ready throughout', async (t) => {
  const live = new FakeLive();
  live.publish(undefined, undefined);
  const { trust, readiness } = start(t, leaf1, live);
  await trust.untilReady(AbortSignal.timeout(10_000));
  live.publish([ca1.certPem], [ca1.certPem]);
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS * 2));
  t.same(readiness.map((r) => r.ready), [true], 'no kube-apiserver can hold an older bundle of a configuration that did not exist');
});

t.test('the held certificate is given up shortly before it expires, with a warning', async (t) => {
  const live = new FakeLive();
  live.publish([ca1.certPem], [ca1.certPem]);
  const nearExpiry = () => leaf1.certNotAfter.getTime() - HOLD_MARGIN_MS + 50;
  const { trust, served, logs } = start(t, leaf1, live, nearExpiry);
  trust.offer(leaf2);
  await until('served', () => served.length === 1);
  t.equal(served[0], leaf2);
  t.match(logs.lines.find((l) => l['level'] === 40 && String(l['msg']).startsWith('serving the new certificate although')), { previousNotAfter: leaf1.certNotAfter.toISOString() });
});
