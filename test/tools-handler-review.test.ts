import t from 'tap';
import {
  admissionRequest,
  defineMutatingWebhook,
  defineValidatingWebhook,
  reviewPolicy,
  reviewWebhook,
  setLabel,
  type AdmissionContext,
  type k8s,
} from '../src/index.js';

const pod = (image = 'nginx:1.27'): k8s.V1Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } });

t.test('admissionRequest builds every operation as kube-apiserver sends it', async (t) => {
  const created = admissionRequest(pod());
  t.match(created, {
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    name: 'web',
    namespace: 'shop',
    dryRun: false,
    oldObject: null,
    options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
  });
  t.equal(created.object?.metadata?.creationTimestamp, null, 'a CREATE carries creationTimestamp: null');
  t.match(created.uid, /^[0-9a-f-]{36}$/);

  const updated = admissionRequest(pod('nginx:1.28'), { oldObject: pod(), userInfo: { username: 'alice', groups: ['dev'] }, dryRun: true });
  t.match(updated, { operation: 'UPDATE', dryRun: true, options: { kind: 'UpdateOptions', dryRun: ['All'] }, userInfo: { username: 'alice' } });
  t.equal(updated.oldObject?.spec?.containers[0]?.image, 'nginx:1.27');

  const deleted = admissionRequest(pod(), { operation: 'DELETE' });
  t.match(deleted, { operation: 'DELETE', object: null, options: { kind: 'DeleteOptions' }, name: 'web' });
  t.equal(deleted.oldObject?.metadata?.name, 'web', 'DELETE: the stored object is oldObject');

  const exec = admissionRequest(pod(), { operation: 'CONNECT', subResource: 'exec' });
  t.match(exec, { operation: 'CONNECT', subResource: 'exec', requestSubResource: 'exec', kind: { kind: 'PodExecOptions' }, options: null, resource: { resource: 'pods' } });
  t.same(exec.object, { kind: 'PodExecOptions', apiVersion: 'v1' });

  const debug = admissionRequest(pod(), { oldObject: pod(), subResource: 'ephemeralcontainers' });
  t.match(debug, { operation: 'UPDATE', subResource: 'ephemeralcontainers' });

  const unplaced = admissionRequest({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'api' } }, { namespace: 'team-a' });
  t.match(unplaced, { namespace: 'team-a', resource: { group: 'apps', resource: 'deployments' }, object: { metadata: { namespace: 'team-a' } } });
  const clusterScoped = admissionRequest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  t.equal(clusterScoped.namespace, 'shop', 'a Namespace request names itself');
  t.throws(() => admissionRequest(pod(), { operation: 'UPDATE' }), /needs the stored version/);
  t.throws(() => admissionRequest(pod(), { operation: 'CONNECT' }), /subresource/);
});

const noLatest = defineValidatingWebhook({
  name: 'no-latest',
  kind: 'Pod',
  handler: (request) =>
    request.object?.spec?.containers.some((c) => c.image?.endsWith(':latest'))
      ? { allowed: false, message: 'pin your images', warnings: ['see https://example.com/pinning', 'bell\u0007 drops'] }
      : { allowed: true, auditAnnotations: { checked: 'true' } },
});

t.test('reviewWebhook: the decision, message, warnings and audit annotations the server answers', async (t) => {
  const denied = await reviewWebhook(noLatest, admissionRequest(pod('nginx:latest')));
  t.match(denied, { called: true, decision: 'denied', allowed: false, code: 403, message: 'pin your images' });
  t.same(denied.warnings, ['see https://example.com/pinning', 'bell drops'], 'control characters are taken out, as the server does');
  t.match(denied.response, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { allowed: false, status: { code: 403, status: 'Failure' } } });
  const allowed = await reviewWebhook(noLatest, admissionRequest(pod()), { apiVersion: 'admission.k8s.io/v1beta1' });
  t.match(allowed, { decision: 'allowed', allowed: true, auditAnnotations: { checked: 'true' }, response: { apiVersion: 'admission.k8s.io/v1beta1' } });
});

t.test('reviewWebhook: not called where kube-apiserver would not call it', async (t) => {
  const deleted = await reviewWebhook(noLatest, admissionRequest(pod('nginx:latest'), { operation: 'DELETE' }));
  t.match(deleted, { called: false, decision: 'skipped', allowed: true, why: 'no rule matches' });
  const system = await reviewWebhook(noLatest, admissionRequest({ ...pod('nginx:latest'), metadata: { name: 'x', namespace: 'kube-system' } }));
  t.match(system, { called: false, why: 'namespaceSelector does not match' }, 'kube-system is excluded, as registration excludes it');
  const selective = defineValidatingWebhook({ name: 'selective', kind: 'Pod', namespaceSelector: { matchLabels: { policy: 'strict' } }, handler: () => ({ allowed: false, message: 'strict' }) });
  const lax = await reviewWebhook(selective, admissionRequest(pod()), { namespaceObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { policy: 'lax' } } } });
  t.equal(lax.called, false);
  const strict = await reviewWebhook(selective, admissionRequest(pod()), { namespaceObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { policy: 'strict' } } } });
  t.match(strict, { called: true, allowed: false, message: 'strict' });
});

t.test('reviewWebhook: a mutation comes back as the JSONPatch and the patched object', async (t) => {
  const labeler = defineMutatingWebhook({
    name: 'labeler',
    kind: 'Pod',
    handler: (request, context) => {
      if (!request.object) return { allowed: true };
      setLabel(request.object, 'example.com/dry-run', String(context.dryRun));
      return { allowed: true, object: request.object };
    },
  });
  const request = admissionRequest(pod(), { dryRun: true });
  const review = await reviewWebhook(labeler, request);
  t.same(review.patch, [{ op: 'add', path: '/metadata/labels/example.com~1dry-run', value: 'true' }]);
  t.same(review.object?.metadata?.labels, { app: 'web', 'example.com/dry-run': 'true' });
  t.same(request.object?.metadata?.labels, { app: 'web' }, 'the request itself is left alone');
  t.match(review.response, { response: { patchType: 'JSONPatch' } });
});

t.test('reviewWebhook: failurePolicy on a throw and on a missed deadline, as the server applies it', async (t) => {
  const throwing = (failurePolicy: 'Fail' | 'Ignore') =>
    defineValidatingWebhook({
      name: 'throws',
      kind: 'Pod',
      failurePolicy,
      handler: () => {
        throw new Error('backend down');
      },
    });
  const failed = await reviewWebhook(throwing('Fail'), admissionRequest(pod()));
  t.match(failed, { decision: 'error', allowed: false, code: 500, reason: 'InternalError', failure: 'backend down' });
  t.match(failed.message, /webhook "throws" failed with an internal error \(failurePolicy Fail\)/);
  const ignored = await reviewWebhook(throwing('Ignore'), admissionRequest(pod()));
  t.match(ignored, { decision: 'error', allowed: true, auditAnnotations: { 'failed-open': 'error' } });
  t.match(ignored.warnings[0], /allowed by failurePolicy Ignore/);

  let seen: AdmissionContext | undefined;
  const slow = defineValidatingWebhook({
    name: 'slow',
    kind: 'Pod',
    timeoutSeconds: 1,
    handler: (_request, context) => {
      seen = context;
      return new Promise(() => undefined);
    },
  });
  const started = performance.now();
  const late = await reviewWebhook(slow, admissionRequest(pod()));
  const elapsed = performance.now() - started;
  t.match(late, { decision: 'timeout', allowed: false, code: 500, failure: 'no decision within 900 ms' });
  t.ok(elapsed >= 850, `answered at the server's budget (1 s minus its margin), after ${Math.round(elapsed)} ms`);
  t.equal(seen?.signal.aborted, true, "the handler's signal aborted at the deadline");
  const shorter = await reviewWebhook(slow, admissionRequest(pod()), { timeout: '500ms' });
  t.match(shorter, { decision: 'timeout', failure: 'no decision within 400 ms' }, 'the ?timeout= kube-apiserver sends decides the budget');
});

t.test('reviewWebhook: the handler context carries dryRun, the webhook and the namespace object', async (t) => {
  let context: AdmissionContext | undefined;
  const spy = defineValidatingWebhook({ name: 'spy', kind: 'Pod', handler: (_r, c) => ((context = c), { allowed: true }) });
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { team: 'a' } } };
  await reviewWebhook(spy, admissionRequest(pod(), { dryRun: true }), { namespaceObject: namespace });
  t.equal(context?.dryRun, true);
  t.equal(context?.webhook.name, 'spy');
  t.same(context?.namespaceObject, { metadata: { name: 'shop', labels: { team: 'a' } } }, "shaped as the server's Namespace cache shapes it (a VAP's namespaceObject)");
});

t.test('reviewPolicy: mutating webhooks first, the validating ones see the mutated object', async (t) => {
  const pinner = defineMutatingWebhook({
    name: 'pinner',
    kind: 'Pod',
    handler: (request) => {
      for (const container of request.object?.spec?.containers ?? []) if (container.image?.endsWith(':latest')) container.image = container.image.replace(/:latest$/, ':1.27');
      return request.object ? { allowed: true, object: request.object } : { allowed: true };
    },
  });
  const outcome = await reviewPolicy([noLatest, pinner], admissionRequest(pod('nginx:latest')));
  t.equal(outcome.allowed, true, 'the validating webhook saw the pinned image');
  t.same(outcome.webhooks.map((w) => `${w.webhook}:${w.decision}`), ['pinner:allowed', 'no-latest:allowed']);
  t.equal((outcome.object as k8s.V1Pod).spec?.containers[0]?.image, 'nginx:1.27');
  const hanging = defineValidatingWebhook({ name: 'hanging', kind: 'Pod', timeoutSeconds: 1, failurePolicy: 'Ignore', handler: () => new Promise(() => undefined) });
  const timedOut = await reviewPolicy([hanging], admissionRequest(pod()));
  t.match(timedOut.webhooks[0], { decision: 'timeout', allowed: true, why: 'no decision within 900 ms' }, 'the server\'s budget, and the process held open meanwhile');
  const denied = await reviewPolicy([noLatest], admissionRequest(pod('nginx:latest')));
  t.match(denied.denial, { webhook: 'no-latest', code: 403, message: 'admission webhook "no-latest" denied the request: pin your images' });
});
