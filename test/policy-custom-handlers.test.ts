import t from 'tap';
import { annotateCreator, customWebhooks, requirePinnedImages } from '../examples/custom-handler.js';
import { defineMutatingWebhook, defineValidatingWebhook, WebhookDefinitionError } from '../src/webhooks/define-webhook.js';
import { applyPatch, computePatch } from '../src/admission/patch.js';
import { WebhookRegistry } from '../src/webhooks/registry.js';
import type { RuleWithOperations } from '../src/admission/types.js';
import { admissionRequest, deployment, pod, review } from './support/policy/policy-fixtures.js';

const podRule: RuleWithOperations = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };

t.test('define*Webhook fills the same defaults as policy entries', async (t) => {
  const validating = defineValidatingWebhook({ name: 'v', rules: [podRule], handler: () => ({ allowed: true }) });
  const { handler: _v, ...validatingSpec } = validating;
  t.same(validatingSpec, { name: 'v', type: 'validating', rules: [podRule], failurePolicy: 'Fail', sideEffects: 'None', timeoutSeconds: 5, matchPolicy: 'Equivalent' });
  const mutating = defineMutatingWebhook({ name: 'm', rules: [podRule], timeoutSeconds: 10, handler: () => ({ allowed: true }) });
  const { handler: _m, ...mutatingSpec } = mutating;
  t.same(mutatingSpec, {
    name: 'm',
    type: 'mutating',
    rules: [podRule],
    failurePolicy: 'Ignore',
    sideEffects: 'None',
    timeoutSeconds: 10,
    matchPolicy: 'Equivalent',
    reinvocationPolicy: 'Never',
  });
});

t.test('define*Webhook refuses an invalid definition, listing every problem', async (t) => {
  const error = t.throws(() =>
    defineValidatingWebhook({
      name: 'Not_Valid',
      rules: [{ operations: ['PATCH' as 'CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: [] }],
      timeoutSeconds: 60,
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In' }] },
      handler: () => ({ allowed: true }),
    }),
  );
  t.type(error, WebhookDefinitionError);
  t.same((error as WebhookDefinitionError).problems, [
    'webhook "Not_Valid".name: "Not_Valid" is not a valid webhook name; it must be a DNS-1123 label: at most 63 lowercase letters, digits or "-", starting and ending with a letter or digit (it becomes the path /validate/<name> or /mutate/<name>)',
    'webhook "Not_Valid".rules[0].operations[0]: unsupported operation "PATCH"; use CREATE, UPDATE, DELETE, CONNECT, *',
    'webhook "Not_Valid".rules[0].resources: must list at least one resource ("*" for all)',
    'webhook "Not_Valid".timeoutSeconds: must be an integer from 1 to 30, got 60',
    'webhook "Not_Valid".namespaceSelector.matchExpressions[0]: operator In needs a non-empty "values" list',
  ]);
  t.throws(() => defineMutatingWebhook({ name: 'm', rules: [], handler: () => ({ allowed: true }) }), /must list at least one rule/);
  t.throws(() => defineMutatingWebhook({ name: 'm', rules: [podRule], handler: 'nope' as never }), /handler must be a function/);
});

t.test('the example custom validating handler', async (t) => {
  const enforced = requirePinnedImages();
  t.same(await review(enforced, admissionRequest(pod({ containers: [{ name: 'app', image: 'nginx:1.27' }] }))), { allowed: true });
  t.same(await review(enforced, admissionRequest(pod({ containers: [{ name: 'app', image: 'localhost:5000/app@sha256:0a' }] }))), { allowed: true });
  t.match(await review(enforced, admissionRequest(pod({ containers: [{ name: 'app', image: 'localhost:5000/app' }] }))), {
    allowed: false,
    message: 'container "app" image "localhost:5000/app" is not pinned; use a version tag or a digest',
  });
  t.match(await review(requirePinnedImages('warn'), admissionRequest(deployment({ containers: [{ name: 'app', image: 'nginx:latest' }] }))), {
    allowed: true,
    warnings: [/^require-pinned-images: container "app" in pod template of Deployment "web" image "nginx:latest" is not pinned/],
  });
  t.same(await review(enforced, admissionRequest(null, { operation: 'DELETE', oldObject: pod({ containers: [] }) })), { allowed: true });
});

t.test('the example custom mutating handler', async (t) => {
  const webhook = annotateCreator();
  const original = pod({ containers: [{ name: 'app', image: 'nginx:1.27' }] });
  const decision = await review(webhook, admissionRequest(original));
  if (!('object' in decision)) throw new Error('expected a mutation');
  const result = applyPatch(original, computePatch(original, decision.object));
  t.same(result.metadata?.annotations, { 'example.com/created-by': 'kubernetes-admin' });
  t.same(await review(webhook, admissionRequest(result)), { allowed: true }, 'idempotent');
  t.doesNotThrow(() => new WebhookRegistry(customWebhooks()), 'the registry takes them as they are');
});
