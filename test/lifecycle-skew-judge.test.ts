/**
 * Entries a call names that this replica does not know: removed ones are answered as not served,
 * ones that may be newer are retried elsewhere. And the record of removed entries the leader keeps
 * on the configurations.
 */
import t from 'tap';
import type { WebhookConfiguration } from '../src/kube/configuration-api.js';
import type { LiveSnapshot } from '../src/kube/live-configurations.js';
import { POLICY_VERSION_ANNOTATION } from '../src/lifecycle/policy-order.js';
import { MAX_REMOVED_ENTRIES, recordRemovedEntries, REMOVED_ENTRIES_ANNOTATION, REMOVED_ENTRY_TTL_MS, removedEntries } from '../src/lifecycle/removed-entries.js';
import { SkewJudge } from '../src/lifecycle/skew-judge.js';

const SERVICE = { name: 'kas', namespace: 'ops' };
const LIVE_FILE = '2026-12-01T10:00:00.000Z';

const hook = (path: string, failurePolicy = 'Fail', service = SERVICE) => ({
  name: `${path.split('/')[2]}.kas.ops.svc`,
  failurePolicy,
  sideEffects: 'None',
  clientConfig: { service: { ...service, path, port: 443 } },
});

function configuration(hooks: ReturnType<typeof hook>[], annotations: Record<string, string> = {}): WebhookConfiguration {
  return { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'kas', annotations }, webhooks: hooks } as unknown as WebhookConfiguration;
}

const version = (modified: string) => ({ [POLICY_VERSION_ANNOTATION]: JSON.stringify({ digest: 'sha256:x', modified }) });

function judge(validating: WebhookConfiguration | undefined): SkewJudge {
  const snapshot: LiveSnapshot = { mutating: undefined, validating };
  return new SkewJudge({ snapshot: () => snapshot, service: SERVICE });
}

const GROUP = '/validate/validating-fail-t5/deny-privileged.require-team';

t.test('behind the registered policy: an entry the live configuration routes may be an enforcing rule of the newer policy: retry', async (t) => {
  const live = configuration([hook(GROUP)], version(LIVE_FILE));
  t.equal(judge(live).decide('validating', ['require-team'], GROUP), 'retry');
});

t.test('ahead of the registered policy: an entry it still routes may be enforced by the replicas behind (a rename the leader has not registered yet): retry', async (t) => {
  const live = configuration([hook(GROUP)], version(LIVE_FILE));
  t.equal(judge(live).decide('validating', ['require-team'], GROUP), 'retry');
});

t.test('an entry the leader recorded as removed is not served; one the live configurations do not know at all may be newer: retry', async (t) => {
  const live = configuration([hook('/validate/validating-fail-t5/deny-privileged')], { ...version(LIVE_FILE), [REMOVED_ENTRIES_ANNOTATION]: JSON.stringify({ 'validating/require-team': LIVE_FILE }) });
  const fresh = judge(live);
  t.equal(fresh.decide('validating', ['require-team'], GROUP), 'unserved', 'removed: the lagging kube-apiserver still calls it');
  t.equal(fresh.decide('validating', ['require-owner'], '/validate/validating-fail-t5/deny-privileged.require-owner'), 'retry', 'unknown everywhere: this replica’s view may lag');
  t.equal(fresh.decide('validating', ['require-team', 'require-owner'], GROUP), 'retry', 'one possibly new entry is enough');
  t.equal(fresh.decide('mutating', ['require-team'], GROUP), 'retry', 'the record is per type');
});

t.test('a webhook the live configuration registers with failurePolicy Ignore fails open anyway; nothing read yet: retry', async (t) => {
  const live = configuration([hook('/validate/warn-owner', 'Ignore')], version(LIVE_FILE));
  t.equal(judge(live).decide('validating', ['warn-owner'], '/validate/warn-owner'), 'unserved');
  t.equal(judge(live).decide('validating', ['warn-owner'], '/validate/other'), 'retry');
  const unread = new SkewJudge({ snapshot: () => undefined, service: SERVICE });
  t.equal(unread.decide('validating', ['x'], '/validate/x'), 'retry');
  const otherService = configuration([hook(GROUP, 'Fail', { name: 'someone-else', namespace: 'ops' })], version(LIVE_FILE));
  t.equal(judge(otherService).decide('validating', ['require-team'], GROUP), 'retry', "another service's webhooks say nothing");
});

t.test('the leader records the entries a new version drops, keeps the record for its TTL, and forgets entries routed again', async (t) => {
  let now = new Date('2026-12-01T10:00:00.000Z');
  const record = recordRemovedEntries(SERVICE, () => now);
  const v1 = configuration([hook(GROUP), hook('/validate/validating-ignore-t5/warn-owner', 'Ignore')]);
  const v2 = configuration([hook('/validate/validating-fail-t5/deny-privileged'), hook('/validate/validating-ignore-t5/warn-owner', 'Ignore')]);
  t.equal(record(v1, undefined), v1, 'a first registration: nothing to record, nothing written');
  t.equal(record(v1, v1), v1, 'nothing removed');

  const written = record(v2, v1);
  t.same(Object.fromEntries(removedEntries(written)), { 'validating/require-team': '2026-12-01T10:00:00.000Z' });

  now = new Date(now.getTime() + 60_000);
  const again = record(v2, written);
  t.same(Object.fromEntries(removedEntries(again)), { 'validating/require-team': '2026-12-01T10:00:00.000Z' }, 'kept with its time: the next pass writes nothing new');

  const readded = record(v1, again);
  t.same(Object.fromEntries(removedEntries(readded)), {}, 'routed again: no longer removed');
  t.equal(readded.metadata?.annotations?.[REMOVED_ENTRIES_ANNOTATION], '{}', 'written empty, so the old record goes');

  now = new Date(Date.parse('2026-12-01T10:00:00.000Z') + REMOVED_ENTRY_TTL_MS);
  t.same(Object.fromEntries(removedEntries(record(v2, again))), {}, 'past the TTL the record is dropped');

  const many = configuration(Array.from({ length: MAX_REMOVED_ENTRIES + 10 }, (_, i) => hook(`/validate/rule-${i}`)));
  t.equal(removedEntries(record(configuration([]), many)).size, MAX_REMOVED_ENTRIES, 'bounded');
  t.same(removedEntries(configuration([], { [REMOVED_ENTRIES_ANNOTATION]: 'not json' })).size, 0, 'a garbled record reads as none');
});
