import t from 'tap';
import { X509Certificate } from 'node:crypto';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { CaBundleOverlap, RETIRED_CAS_ANNOTATION } from '../src/registration/ca-bundle-overlap.js';
import { MAX_RETIRED_CAS, overlapBundle } from '../src/tls/ca-overlap.js';
import { DAY_MS, makeCa } from './support/tls/tls-fixtures.js';
import { within } from './support/deadline.js';

const HOUR_MS = 3_600_000;
const T0 = new Date();
const later = (ms: number): Date => new Date(T0.getTime() + ms);
// Issued a day apart, so that "oldest first" has one answer.
const ca1 = await makeCa(new Date(T0.getTime() - 2 * DAY_MS), 365, 'ca one');
const ca2 = await makeCa(new Date(T0.getTime() - DAY_MS), 365, 'ca two');
const shortLived = await makeCa(new Date(T0.getTime() - 3 * DAY_MS), 3.01, 'ca expiring in 15 minutes');
const fp = (pem: string): string => new X509Certificate(pem).fingerprint256;
const held = (pem: string): string[] => (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(fp);

t.test('a CA that left ca.crt stays for the overlap, then goes', async (t) => {
  const first = overlapBundle({ currentPem: ca2.certPem, registeredPem: ca1.certPem, retiredAt: {}, now: T0, overlapMs: HOUR_MS });
  t.same(held(first.bundlePem), [fp(ca1.certPem), fp(ca2.certPem)], 'the new CA and the one registered before, oldest first');
  t.same(first.retiredAt, { [fp(ca1.certPem)]: T0.toISOString() }, 'its retirement recorded');
  t.equal(first.nextPruneAt?.getTime(), later(HOUR_MS).getTime());

  // Read back later: the recorded time holds, not the time of reading.
  const again = overlapBundle({ currentPem: ca2.certPem, registeredPem: first.bundlePem, retiredAt: first.retiredAt, now: later(HOUR_MS - 1), overlapMs: HOUR_MS });
  t.equal(again.bundlePem, first.bundlePem, 'still there a moment before the overlap ends');
  t.same(again.retiredAt, first.retiredAt);

  const done = overlapBundle({ currentPem: ca2.certPem, registeredPem: again.bundlePem, retiredAt: again.retiredAt, now: later(HOUR_MS), overlapMs: HOUR_MS });
  t.same(held(done.bundlePem), [fp(ca2.certPem)], 'gone once the overlap is over');
  t.same(done.retiredAt, {});
  t.equal(done.nextPruneAt, undefined);
});

t.test('a retained CA never outlives its own validity', async (t) => {
  const result = overlapBundle({ currentPem: ca2.certPem, registeredPem: shortLived.certPem, retiredAt: {}, now: T0, overlapMs: HOUR_MS });
  const expiry = new Date(new X509Certificate(shortLived.certPem).validTo);
  t.ok(expiry < later(HOUR_MS), 'fixture: it expires inside the overlap');
  t.equal(result.nextPruneAt?.getTime(), expiry.getTime(), 'pruned at its expiry');
  t.same(held(overlapBundle({ currentPem: ca2.certPem, registeredPem: result.bundlePem, retiredAt: result.retiredAt, now: expiry, overlapMs: HOUR_MS }).bundlePem), [fp(ca2.certPem)]);
});

t.test('--ca-overlap 0s registers exactly the current CAs', async (t) => {
  const result = overlapBundle({ currentPem: ca2.certPem, registeredPem: ca1.certPem + ca2.certPem, retiredAt: {}, now: T0, overlapMs: 0 });
  t.same(held(result.bundlePem), [fp(ca2.certPem)]);
});

t.test('a CA back in ca.crt is current again, its record dropped; unreadable and future records are no licence', async (t) => {
  const back = overlapBundle({ currentPem: ca1.certPem + ca2.certPem, registeredPem: ca1.certPem + ca2.certPem, retiredAt: { [fp(ca1.certPem)]: T0.toISOString() }, now: later(2 * HOUR_MS), overlapMs: HOUR_MS });
  t.same(held(back.bundlePem), [fp(ca1.certPem), fp(ca2.certPem)]);
  t.same(back.retiredAt, {});
  const garbage = overlapBundle({ currentPem: ca2.certPem, registeredPem: ca1.certPem, retiredAt: { [fp(ca1.certPem)]: 'yesterday-ish' }, now: T0, overlapMs: HOUR_MS });
  t.same(garbage.retiredAt, { [fp(ca1.certPem)]: T0.toISOString() }, 'an unreadable time starts the overlap now');
  const future = overlapBundle({ currentPem: ca2.certPem, registeredPem: ca1.certPem, retiredAt: { [fp(ca1.certPem)]: later(DAY_MS).toISOString() }, now: T0, overlapMs: HOUR_MS });
  t.equal(future.nextPruneAt?.getTime(), later(HOUR_MS).getTime(), 'a time ahead of this clock does not stretch the overlap');
  const broken = overlapBundle({ currentPem: ca2.certPem, registeredPem: `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${ca1.certPem}`, retiredAt: {}, now: T0, overlapMs: HOUR_MS });
  t.same(held(broken.bundlePem), [fp(ca1.certPem), fp(ca2.certPem)], 'a block that does not parse is dropped, the rest kept');
});

t.test(`at most ${MAX_RETIRED_CAS} retired CAs are kept, the most recently retired`, async (t) => {
  const many = await Promise.all(Array.from({ length: MAX_RETIRED_CAS + 2 }, (_, i) => makeCa(T0, 365, `old ${i}`)));
  const retiredAt = Object.fromEntries(many.map((ca, i) => [fp(ca.certPem), later(-(i + 1) * 60_000).toISOString()]));
  const result = overlapBundle({ currentPem: ca2.certPem, registeredPem: many.map((ca) => ca.certPem).join(''), retiredAt, now: T0, overlapMs: HOUR_MS });
  t.equal(held(result.bundlePem).length, MAX_RETIRED_CAS + 1);
  t.same(Object.keys(result.retiredAt).sort(), many.slice(0, MAX_RETIRED_CAS).map((ca) => fp(ca.certPem)).sort());
});

function configuration(caBundlePem: string, annotations?: Record<string, string>): V1ValidatingWebhookConfiguration {
  const webhook = (name: string) => ({ name, admissionReviewVersions: ['v1'], sideEffects: 'None', clientConfig: { caBundle: Buffer.from(caBundlePem).toString('base64') } });
  return { metadata: { name: 'hook', ...(annotations ? { annotations } : {}) }, webhooks: [webhook('a.hook.ops.svc'), webhook('b.hook.ops.svc')] };
}
const bundles = (object: V1ValidatingWebhookConfiguration): string[][] => (object.webhooks ?? []).map((w) => held(Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8')));

t.test('prepare(): reads the previous bundle and record from the live configuration and writes both back', async (t) => {
  let now = T0;
  const overlap = new CaBundleOverlap(HOUR_MS, () => now);
  t.teardown(() => overlap.stop());
  const created = overlap.prepare(configuration(ca1.certPem), undefined) as V1ValidatingWebhookConfiguration;
  t.same(bundles(created), [[fp(ca1.certPem)], [fp(ca1.certPem)]], 'a first registration: the current CAs');
  t.equal(created.metadata?.annotations?.[RETIRED_CAS_ANNOTATION], '{}');

  const moved = overlap.prepare(configuration(ca2.certPem), created) as V1ValidatingWebhookConfiguration;
  t.same(bundles(moved), [[fp(ca1.certPem), fp(ca2.certPem)], [fp(ca1.certPem), fp(ca2.certPem)]], 'every webhook trusts both');
  t.same(JSON.parse(moved.metadata?.annotations?.[RETIRED_CAS_ANNOTATION] ?? ''), { [fp(ca1.certPem)]: T0.toISOString() });

  // Another leader (or this one restarted) reads it back half an hour later.
  now = later(HOUR_MS / 2);
  const successor = new CaBundleOverlap(HOUR_MS, () => now);
  t.teardown(() => successor.stop());
  t.same(successor.prepare(configuration(ca2.certPem), moved), moved, 'the same bundle and record: nothing to write');
  now = later(HOUR_MS);
  t.same(bundles(successor.prepare(configuration(ca2.certPem), moved) as V1ValidatingWebhookConfiguration), [[fp(ca2.certPem)], [fp(ca2.certPem)]], 'pruned when the recorded overlap ends');
  t.same(overlap.prepare({ metadata: { name: 'hook' }, webhooks: [] }, moved), { metadata: { name: 'hook' }, webhooks: [] }, 'no webhooks, nothing to trust');
});

t.test('the prune timer asks for a pass when a retained CA is due to leave', async (t) => {
  const overlap = new CaBundleOverlap(200);
  t.teardown(() => overlap.stop());
  const asked = new Promise<number>((resolve) => overlap.onPruneDue(() => resolve(performance.now())));
  const began = performance.now();
  overlap.prepare(configuration(ca2.certPem), configuration(ca1.certPem));
  const at = await within(5_000, 'a prune pass', asked);
  t.ok(at - began >= 190, 'not before the overlap ends');
});
