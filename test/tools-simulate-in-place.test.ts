import t from 'tap';
import { defineMutatingWebhook } from '../src/webhooks/define-webhook.js';
import type { KubeObject } from '../src/admission/types.js';
import { jsonReport } from '../src/tools/evaluate-report.js';
import { simulate } from '../src/tools/evaluation.js';
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

// fast-json-patch inserts an add's value by reference, and the patched object is then decoded in
// place (kube-apiserver's defaults): the patch reported must stay what the webhook sent, the
// defaults landing in the object only, for every webhook of the chain.
const sidecar = defineMutatingWebhook({
  name: 'sidecar',
  rules: [podRule],
  handler: (request) => {
    const object = request.object as KubeObject & { spec: { containers: object[] } };
    object.spec.containers.push({ name: 'proxy', image: 'envoy', env: [{ name: 'A', value: '1' }] });
    return { allowed: true, object };
  },
});
const envEverywhere = defineMutatingWebhook({
  name: 'env-everywhere',
  rules: [podRule],
  handler: (request) => {
    const object = request.object as KubeObject & { spec: { containers: Array<{ env?: object[] }> } };
    for (const container of object.spec.containers) (container.env ??= []).push({ name: 'B', value: '2' });
    object.spec.containers.push({ name: 'late', image: 'busybox' } as never);
    return { allowed: true, object };
  },
});

t.test('the patches reported are the webhooks\' as sent: the defaults of decoding and later patches land in the object, not in them', async (t) => {
  const request = admissionRequest(pod({ containers: [{ name: 'c', image: 'nginx' }] }));
  const outcome = await simulate([sidecar, envEverywhere], request, { excludedNamespaces: [] });
  t.same(outcome.webhooks[0]?.patch, [{ op: 'add', path: '/spec/containers/1', value: { name: 'proxy', image: 'envoy', env: [{ name: 'A', value: '1' }] } }]);
  t.same(outcome.webhooks[1]?.patch, [
    { op: 'add', path: '/spec/containers/1/env/1', value: { name: 'B', value: '2' } },
    { op: 'add', path: '/spec/containers/0/env', value: [{ name: 'B', value: '2' }] },
    { op: 'add', path: '/spec/containers/2', value: { name: 'late', image: 'busybox' } },
  ]);
  const containers = (outcome.object?.spec as { containers: Array<Record<string, unknown>> }).containers;
  t.same(
    containers.map((c) => [c['name'], c['imagePullPolicy'], c['terminationMessagePath'], c['env']]),
    [
      ['c', 'Always', '/dev/termination-log', [{ name: 'B', value: '2' }]],
      ['proxy', 'Always', '/dev/termination-log', [{ name: 'A', value: '1' }, { name: 'B', value: '2' }]],
      ['late', 'Always', '/dev/termination-log', undefined],
    ],
    'the stored object has every change once, defaulted',
  );
  const report = JSON.parse(jsonReport([{ manifest: { object: request.object!, source: 'pod.yaml' }, outcome }])) as { objects: Array<{ webhooks: Array<{ patch?: unknown }> }> };
  t.same(
    report.objects[0]?.webhooks.map((w) => w.patch),
    outcome.webhooks.map((w) => w.patch),
    "evaluate's JSON report shows the same patches",
  );
  t.notOk(JSON.stringify(report.objects[0]?.webhooks).includes('terminationMessagePath'), 'no default in any reported patch');
});
