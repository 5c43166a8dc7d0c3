import t from 'tap';
import { defineMutatingWebhook } from '../src/policy/define-webhook.js';
import type { KubeObject } from '../src/policy/types.js';
import { simulate } from '../src/tools/simulate.js';
import { admissionRequest, pod } from './support/policy/policy-fixtures.js';

const podRule = { operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };

// A handler that edits the object it was given in place and returns that same object: the
// simulation must still compute the patch against the object as it arrived, and leave the
// request it reports untouched.
const inPlace = defineMutatingWebhook({
  name: 'in-place',
  rules: [podRule],
  handler: (request) => {
    const object = request.object as KubeObject;
    object.metadata!.labels = { ...object.metadata!.labels, team: 'a' };
    return { allowed: true, object };
  },
});

t.test('a handler that mutates its request in place: the patch is against the object as it arrived', async (t) => {
  const request = admissionRequest(pod({ containers: [{ name: 'c', image: 'nginx' }] }));
  const outcome = await simulate([inPlace], request, { excludedNamespaces: [] });
  t.same(outcome.webhooks[0]?.patch, [{ op: 'add', path: '/metadata/labels/team', value: 'a' }]);
  t.same(outcome.request.object?.metadata?.labels, { app: 'web' }, 'the reported request keeps the object as it arrived');
  t.same(outcome.object?.metadata?.labels, { app: 'web', team: 'a' });
});
