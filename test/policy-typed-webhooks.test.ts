import t from 'tap';
import { defineKind, defineMutatingWebhook, defineValidatingWebhook, rulesForKinds, WebhookDefinitionError, type KubeObject } from '../src/index.js';

const allow = () => ({ allowed: true as const });

t.test('a Pod webhook registers for pods and, when it sees updates, for pods/ephemeralcontainers (kubectl debug)', async (t) => {
  const webhook = defineValidatingWebhook({ name: 'pods', kind: 'Pod', handler: allow });
  t.same(webhook.rules, [
    { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' },
    { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'], scope: 'Namespaced' },
  ]);
  const createOnly = defineValidatingWebhook({ name: 'pods', kind: 'Pod', operations: ['CREATE'], handler: allow });
  t.same(createOnly.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }], 'no UPDATE: no debug containers to judge');
  const all = defineValidatingWebhook({ name: 'pods', kind: 'Pod', operations: ['*'], handler: allow });
  t.same(all.rules[1]?.resources, ['pods/ephemeralcontainers'], '"*" covers UPDATE');
});

t.test('a mutating typed webhook defaults to CREATE, as the built-in mutating rules do', async (t) => {
  const webhook = defineMutatingWebhook({ name: 'm', kind: 'Pod', handler: allow });
  t.same(webhook.rules, [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }]);
  t.equal(webhook.failurePolicy, 'Ignore');
  t.equal(webhook.reinvocationPolicy, 'Never');
});

t.test('kinds of one group, version and scope share a rule; others get their own', async (t) => {
  const webhook = defineValidatingWebhook({ name: 'workloads', kind: ['Deployment', 'StatefulSet', 'CronJob', 'Namespace', 'HorizontalPodAutoscaler'], handler: allow });
  t.same(webhook.rules, [
    { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'statefulsets'], scope: 'Namespaced' },
    { operations: ['CREATE', 'UPDATE'], apiGroups: ['batch'], apiVersions: ['v1'], resources: ['cronjobs'], scope: 'Namespaced' },
    { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' },
    { operations: ['CREATE', 'UPDATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'], scope: 'Namespaced' },
  ]);
  t.same(rulesForKinds(['Ingress'], ['DELETE']), [{ operations: ['DELETE'], apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], resources: ['ingresses'], scope: 'Namespaced' }]);
});

t.test('a CRD kind from defineKind derives its rules the same way', async (t) => {
  const widgets = defineKind<{ spec?: { size?: number } }>({ kind: 'Widget', group: 'example.com', version: 'v1alpha1', plural: 'widgets', namespaced: false, subresources: ['status'] });
  const webhook = defineValidatingWebhook({ name: 'widgets', kind: widgets, handler: (request) => ((request.object?.spec?.size ?? 0) > 3 ? { allowed: false, message: 'too big' } : { allowed: true }) });
  t.same(webhook.rules, [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['example.com'], apiVersions: ['v1alpha1'], resources: ['widgets'], scope: 'Cluster' }]);
});

t.test('every other field of the entry table is kept and checked as for a policy entry', async (t) => {
  const webhook = defineValidatingWebhook({
    name: 'full',
    kind: 'Pod',
    failurePolicy: 'Ignore',
    sideEffects: 'NoneOnDryRun',
    timeoutSeconds: 3,
    matchPolicy: 'Exact',
    namespaceSelector: { matchLabels: { team: 'a' } },
    objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
    matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
    handler: allow,
  });
  t.match(webhook, {
    failurePolicy: 'Ignore',
    sideEffects: 'NoneOnDryRun',
    timeoutSeconds: 3,
    matchPolicy: 'Exact',
    namespaceSelector: { matchLabels: { team: 'a' } },
    objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
    matchConditions: [{ name: 'not-system' }],
  });
  const error = t.throws(() => defineValidatingWebhook({ name: 'Bad_Name', kind: 'Pod', timeoutSeconds: 99, handler: allow })) as WebhookDefinitionError;
  t.ok(error instanceof WebhookDefinitionError);
  t.match(error.problems.join('\n'), /not a valid webhook name/);
  t.match(error.problems.join('\n'), /timeoutSeconds/);
});

t.test('given rules narrow a typed webhook and may not widen it to objects of another type', async (t) => {
  const narrowed = defineValidatingWebhook({
    name: 'status',
    kind: 'Pod',
    rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'pods/status', 'pods/resize'] }],
    handler: allow,
  });
  t.same(narrowed.rules[0]?.resources, ['pods', 'pods/status', 'pods/resize']);
  const widened = t.throws(() =>
    defineValidatingWebhook({ name: 'wide', kind: 'Pod', rules: [{ operations: ['CREATE'], apiGroups: ['', 'apps'], apiVersions: ['v1'], resources: ['pods', 'deployments', 'pods/exec'] }], handler: allow }),
  ) as WebhookDefinitionError;
  t.equal(widened.problems.length, 2, 'deployments (another type) and pods/exec (a CONNECT with PodExecOptions) are refused');
  t.match(widened.problems[0], /resource "deployments".*not one of this webhook's kinds/);
  t.match(widened.problems[1], /resource "pods\/exec"/);
  const otherVersion = t.throws(() =>
    defineValidatingWebhook({ name: 'hpa', kind: 'HorizontalPodAutoscaler', rules: [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v1'], resources: ['horizontalpodautoscalers'] }], handler: allow }),
  ) as WebhookDefinitionError;
  t.match(otherVersion.problems[0], /apiVersions \["v1"\]/, 'autoscaling/v1 objects are not the v2 type');
});

t.test('an unknown kind, bad operations or a missing handler are clear errors', async (t) => {
  const unknown = t.throws(() => defineValidatingWebhook({ name: 'x', kind: 'Widget' as 'Pod', handler: allow })) as WebhookDefinitionError;
  t.match(unknown.problems[0], /kind "Widget" is not a built-in kind .*defineKind.*types --crd/);
  const operations = t.throws(() => defineValidatingWebhook({ name: 'x', kind: 'Pod', operations: ['PATCH' as 'UPDATE'], handler: allow })) as WebhookDefinitionError;
  t.match(operations.problems[0], /unsupported operation "PATCH"/);
  const empty = t.throws(() => defineValidatingWebhook({ name: 'x', kind: [], handler: allow })) as WebhookDefinitionError;
  t.match(empty.problems[0], /at least one kind/);
  t.throws(() => defineMutatingWebhook({ name: 'x', kind: 'Pod', handler: undefined as never }), /handler must be a function/);
});

t.test('the untyped form still works as before', async (t) => {
  const webhook = defineValidatingWebhook({
    name: 'untyped',
    rules: [{ operations: ['CREATE'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
    handler: (request) => ({ allowed: (request.object as KubeObject | null)?.kind !== 'Secret', message: 'no' }) as never,
  });
  t.same(webhook.rules[0]?.resources, ['*']);
  t.throws(() => defineValidatingWebhook({ name: 'x', handler: allow } as never), /rules/);
});
