/**
 * Entries a call names that this replica does not know: one recorded with the definition of an
 * entry it serves is answered by that entry (a rename), removed ones are answered as not served,
 * ones that may be newer are retried elsewhere. And the records of removed entries and of
 * definitions the leader keeps on the configurations.
 */
import t from 'tap';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import type { LiveSnapshot } from '../src/registration/live-configurations.js';
import { POLICY_VERSION_ANNOTATION } from '../src/registration/policy-order.js';
import { DEFAULT_ENTRY_OVERLAP_MS, MAX_REMOVED_ENTRIES, recordRemovedEntries, REMOVED_ENTRIES_ANNOTATION, removedEntries } from '../src/registration/removed-entries.js';
import { ENTRY_DEFINITIONS_ANNOTATION, recordEntryDefinitions, recordedDefinitions } from '../src/registration/entry-definitions.js';
import { SkewJudge } from '../src/registration/skew-judge.js';
import type { Webhook } from '../src/admission/types.js';

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
  const record = recordRemovedEntries(SERVICE, DEFAULT_ENTRY_OVERLAP_MS, () => now);
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

  now = new Date(Date.parse('2026-12-01T10:00:00.000Z') + DEFAULT_ENTRY_OVERLAP_MS);
  t.same(Object.fromEntries(removedEntries(record(v2, again))), {}, 'past the TTL the record is dropped');

  const many = configuration(Array.from({ length: MAX_REMOVED_ENTRIES + 10 }, (_, i) => hook(`/validate/rule-${i}`)));
  t.equal(removedEntries(record(configuration([]), many)).size, MAX_REMOVED_ENTRIES, 'bounded');
  t.same(removedEntries(configuration([], { [REMOVED_ENTRIES_ANNOTATION]: 'not json' })).size, 0, 'a garbled record reads as none');
});

const TEAM = `sha256:${'a'.repeat(32)}`;
const OWNER = `sha256:${'b'.repeat(32)}`;

t.test('an entry recorded with the definition of one this replica serves is answered by it (a rename); otherwise nothing stands in', async (t) => {
  const renamedTo = { name: 'require-team-r1', type: 'validating' } as unknown as Webhook;
  const served = new Map([[TEAM, renamedTo]]);
  const live = configuration([hook('/validate/validating-fail-t5/deny-privileged.require-team-r1')], {
    [REMOVED_ENTRIES_ANNOTATION]: JSON.stringify({ 'validating/require-team': LIVE_FILE }),
    [ENTRY_DEFINITIONS_ANNOTATION]: JSON.stringify({ 'validating/require-team': TEAM, 'validating/require-team-r1': TEAM, 'validating/require-owner': OWNER }),
  });
  const snapshot: LiveSnapshot = { mutating: undefined, validating: live };
  const withDefinition = (type: string, definition: string) => (type === 'validating' ? served.get(definition) : undefined);
  const skew = new SkewJudge({ snapshot: () => snapshot, service: SERVICE, withDefinition });
  t.equal(skew.sameEntry('validating', 'require-team'), renamedTo, 'the old name: the entry it was renamed to');
  t.equal(skew.sameEntry('validating', 'require-owner'), undefined, 'a definition this replica does not serve');
  t.equal(skew.sameEntry('validating', 'require-nobody'), undefined, 'a name the record does not know');
  t.equal(skew.sameEntry('mutating', 'require-team'), undefined, 'per type');
  t.equal(new SkewJudge({ snapshot: () => undefined, service: SERVICE, withDefinition }).sameEntry('validating', 'require-team'), undefined, 'nothing read yet');
  const garbled = configuration([], { [ENTRY_DEFINITIONS_ANNOTATION]: JSON.stringify({ 'validating/require-team': 'md5:x' }) });
  t.same(recordedDefinitions(garbled), new Map(), 'a value that is no definition is left out');
});

t.test('the leader records the definitions of what it routes and of what it removed', async (t) => {
  let own = new Map([['validating/require-team', TEAM], ['validating/deny-privileged', OWNER]]);
  const record = recordEntryDefinitions({ service: SERVICE, own: () => own });
  const removedRecord = recordRemovedEntries(SERVICE, DEFAULT_ENTRY_OVERLAP_MS, () => new Date(LIVE_FILE));
  const v1 = record(configuration([hook(GROUP)]), undefined);
  t.same(Object.fromEntries(recordedDefinitions(v1)), { 'validating/deny-privileged': OWNER, 'validating/require-team': TEAM }, 'every routed entry');

  // Renamed: the leader serves require-team-r1 (and still require-team, retiring).
  own = new Map([['validating/require-team-r1', TEAM], ['validating/deny-privileged', OWNER]]);
  const v2 = record(removedRecord(configuration([hook('/validate/validating-fail-t5/deny-privileged.require-team-r1')]), v1), v1);
  t.same(
    Object.fromEntries(recordedDefinitions(v2)),
    { 'validating/deny-privileged': OWNER, 'validating/require-team': TEAM, 'validating/require-team-r1': TEAM },
    'the removed name keeps the definition recorded while it was routed',
  );
  t.equal(record(v2, v2).metadata?.annotations?.[ENTRY_DEFINITIONS_ANNOTATION], v2.metadata?.annotations?.[ENTRY_DEFINITIONS_ANNOTATION], 'the next pass writes the same');
  const nothing = configuration([hook('/validate/other')]);
  t.equal(record(nothing, undefined), nothing, 'nothing known, nothing written');
});

t.test('a leader whose policy file is older than the live one keeps the live record for what it routes', async (t) => {
  const newer = `sha256:${'c'.repeat(32)}`;
  const live = configuration([hook(GROUP)], { ...version(LIVE_FILE), [ENTRY_DEFINITIONS_ANNOTATION]: JSON.stringify({ 'validating/require-team': newer }) });
  const own = () => new Map([['validating/require-team', TEAM]]);
  const behind = recordEntryDefinitions({ service: SERVICE, own, policyModifiedAt: () => new Date(Date.parse(LIVE_FILE) - 60_000) });
  const ahead = recordEntryDefinitions({ service: SERVICE, own, policyModifiedAt: () => new Date(Date.parse(LIVE_FILE) + 60_000) });
  t.same(Object.fromEntries(recordedDefinitions(behind(live, live))), { 'validating/require-team': newer }, 'behind: the live policy is the newer');
  t.same(Object.fromEntries(recordedDefinitions(ahead(live, live))), { 'validating/require-team': TEAM }, 'ahead: its own');
});
