// The ClusterRole ownerReference follows the ClusterRole's current uid, is absent while it does
// not exist, and owners of other kinds are left alone without a PUT at every pass.
import t from 'tap';
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import { configurationDiffers, mergeForUpdate } from '../src/registration/configuration-diff.js';
import { desiredConfigurations } from '../src/registration/desired-configurations.js';

const ROLE = 'kube-admission-server';
const roleRef = (uid: string): V1OwnerReference => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: ROLE, uid });
const foreign: V1OwnerReference = { apiVersion: 'example.com/v1', kind: 'Installation', name: 'platform', uid: 'f-1' };

function desired(owner?: { uid: string | undefined }): WebhookConfiguration {
  return desiredConfigurations({
    configName: ROLE,
    serviceName: ROLE,
    namespace: 'kas',
    caBundlePem: 'pem',
    webhooks: [],
    excludedNamespaces: [],
    ...(owner ? { owner: { name: ROLE, uid: owner.uid } } : {}),
  }).validating;
}

/** What the API returned: the desired content as stored, with these owners and a resourceVersion. */
function stored(ownerReferences: V1OwnerReference[] | undefined): WebhookConfiguration {
  const object = structuredClone(desired());
  object.metadata = { ...object.metadata, resourceVersion: '42', uid: 'cfg-1', ...(ownerReferences ? { ownerReferences } : {}) };
  return object;
}

t.test('a replaced ClusterRole (new uid): the reference moves to the new uid, the stale one goes', async (t) => {
  const actual = stored([roleRef('old'), foreign]);
  const want = desired({ uid: 'new' });
  t.equal(configurationDiffers(want, actual), true);
  const merged = mergeForUpdate(want, actual);
  t.same(merged.metadata?.ownerReferences, [foreign, roleRef('new')], 'no reference to the deleted uid is kept: garbage collection would not fight over it');
  t.equal(merged.metadata?.resourceVersion, '42');
  t.equal(configurationDiffers(want, merged), false, 'settled after one update');
});

t.test('while the ClusterRole does not exist: no ClusterRole reference at all', async (t) => {
  const want = desired({ uid: undefined });
  t.same(want.metadata?.ownerReferences, [], 'desired says "none of ours"');
  const actual = stored([roleRef('old')]);
  t.equal(configurationDiffers(want, actual), true);
  const merged = mergeForUpdate(want, actual);
  t.equal(merged.metadata?.ownerReferences, undefined, 'the stale reference is removed');
  t.equal(configurationDiffers(want, merged), false);
  t.equal(configurationDiffers(want, stored([foreign])), false, 'an owner of another kind is not ours to remove');
  t.same(mergeForUpdate(want, stored([roleRef('old'), foreign])).metadata?.ownerReferences, [foreign]);
});

t.test('an owner of another kind next to ours: no update at every pass', async (t) => {
  const want = desired({ uid: 'current' });
  t.equal(configurationDiffers(want, stored([foreign, roleRef('current')])), false);
  t.equal(configurationDiffers(want, stored([roleRef('current')])), false);
  t.equal(configurationDiffers(want, stored(undefined)), true, 'a missing reference is added');
});

t.test('no owner configured: references are left as they are', async (t) => {
  const want = desired();
  t.equal(want.metadata?.ownerReferences, undefined);
  t.equal(configurationDiffers(want, stored([roleRef('any'), foreign])), false);
  t.same(mergeForUpdate(want, stored([roleRef('any'), foreign])).metadata?.ownerReferences, [roleRef('any'), foreign]);
});
