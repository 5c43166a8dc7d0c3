/**
 * PolicyOrder: a leader never registers a policy older than the one the live configuration
 * carries; its caBundle still applies, and a newer or first policy is registered as usual.
 */
import t from 'tap';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import { POLICY_VERSION_ANNOTATION, PolicyOrder, policyDigest } from '../src/registration/policy-order.js';
import { captureLogs } from './support/server/server-harness.js';

const hook = (name: string, caBundle = 'T0xE'): Record<string, unknown> => ({
  name: `${name}.kas.ops.svc`,
  sideEffects: 'None',
  failurePolicy: 'Fail',
  clientConfig: { caBundle, service: { name: 'kas', namespace: 'ops', path: `/validate/${name}`, port: 443 } },
});
const configuration = (names: readonly string[], annotations?: Record<string, string>, caBundle?: string): WebhookConfiguration =>
  ({ kind: 'ValidatingWebhookConfiguration', metadata: { name: 'kas', resourceVersion: '7', ...(annotations ? { annotations } : {}) }, webhooks: names.map((n) => hook(n, caBundle)) }) as unknown as WebhookConfiguration;
const versionOf = (c: WebhookConfiguration) => JSON.parse(c.metadata?.annotations?.[POLICY_VERSION_ANNOTATION] ?? 'null') as { digest: string; modified: string } | null;
const paths = (c: WebhookConfiguration) => (c.webhooks ?? []).map((w) => w.clientConfig.service?.path);

const OLD_FILE = new Date('2026-12-01T10:00:00Z');
const NEW_FILE = new Date('2026-12-01T10:01:30Z');
const NEW_CA_PEM = '-----BEGIN CERTIFICATE-----\nnew\n-----END CERTIFICATE-----\n';

function order(modified: Date) {
  const logs = captureLogs();
  return { policyOrder: new PolicyOrder(() => modified, () => NEW_CA_PEM, logs.logger), logs };
}

t.test('the digest covers the webhooks, not their caBundle', async (t) => {
  t.equal(policyDigest(configuration(['a'], undefined, 'QQ==')), policyDigest(configuration(['a'], undefined, 'Qg==')));
  t.not(policyDigest(configuration(['a'])), policyDigest(configuration(['b'])));
  t.match(policyDigest(configuration(['a'])), /^sha256:[0-9a-f]{64}$/);
});

t.test('a first registration, or one over a configuration with no record, records this policy', async (t) => {
  const { policyOrder } = order(OLD_FILE);
  const desired = configuration(['require-team']);
  t.same(versionOf(policyOrder.prepare(desired, undefined)), { digest: policyDigest(desired), modified: OLD_FILE.toISOString() });
  const prepared = policyOrder.prepare(desired, configuration(['something-else']));
  t.same(paths(prepared), ['/validate/require-team']);
  t.same(versionOf(prepared)?.modified, OLD_FILE.toISOString());
});

t.test('a leader with an older file keeps the newer live webhooks, with its own caBundle, and says so once', async (t) => {
  const { policyOrder, logs } = order(OLD_FILE);
  const live = configuration(['require-owner']);
  const liveVersion = { digest: policyDigest(live), modified: NEW_FILE.toISOString() };
  const actual = configuration(['require-owner'], { [POLICY_VERSION_ANNOTATION]: JSON.stringify(liveVersion), other: 'kept by the merge' });
  const prepared = policyOrder.prepare(configuration(['require-team']), actual);
  t.same(paths(prepared), ['/validate/require-owner'], 'no rollback to require-team');
  t.same(versionOf(prepared), liveVersion, 'the record stays the newer one');
  t.equal(prepared.webhooks?.[0]?.clientConfig.caBundle, Buffer.from(NEW_CA_PEM).toString('base64'), 'the caBundle is still this leader’s to push');
  policyOrder.prepare(configuration(['require-team']), actual);
  const waits = logs.lines.filter((l) => l['msg'] === "the live webhook configuration carries a newer policy than this replica's file; keeping it until this replica's policy volume catches up");
  t.equal(waits.length, 1, 'logged once per newer version');
  t.match(waits[0], { level: 40, registered: liveVersion, local: { modified: OLD_FILE.toISOString() } });
});

t.test('a newer file replaces an older live policy; an equal policy keeps its record', async (t) => {
  const old = configuration(['require-team']);
  const actual = configuration(['require-team'], { [POLICY_VERSION_ANNOTATION]: JSON.stringify({ digest: policyDigest(old), modified: OLD_FILE.toISOString() }) });
  const newer = order(NEW_FILE).policyOrder.prepare(configuration(['require-owner']), actual);
  t.same(paths(newer), ['/validate/require-owner']);
  t.same(versionOf(newer)?.modified, NEW_FILE.toISOString());

  // A new pod whose file (same content) was written later: nothing to write for the record.
  const same = order(NEW_FILE).policyOrder.prepare(configuration(['require-team']), actual);
  t.same(versionOf(same), { digest: policyDigest(old), modified: OLD_FILE.toISOString() });
});

t.test('a record that does not parse counts as none', async (t) => {
  const { policyOrder } = order(OLD_FILE);
  for (const broken of ['{', '"text"', '{"digest":1,"modified":"x"}', '{"digest":"sha256:x","modified":"not a date"}']) {
    const prepared = policyOrder.prepare(configuration(['require-team']), configuration(['require-owner'], { [POLICY_VERSION_ANNOTATION]: broken }));
    t.same(paths(prepared), ['/validate/require-team'], `record ${broken}`);
  }
});
