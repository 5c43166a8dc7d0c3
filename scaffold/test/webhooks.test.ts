/**
 * The handlers run as the server runs them (its failurePolicy, deadline, patch), without a
 * cluster: `npm test`. With vitest, the same cases read `import { expect, test } from 'vitest'`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionRequest, reviewWebhook, type ObjectOf } from 'kube-admission-server';
import { pinnedImages, workloadDefaults } from '../src/webhooks.js';

function pod(image: string): ObjectOf<'Pod'> {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'web', image }] } };
}

test('a pod with a latest tag is denied, naming the container', async () => {
  const review = await reviewWebhook(pinnedImages, admissionRequest(pod('nginx:latest')));
  assert.equal(review.allowed, false);
  assert.equal(review.code, 403);
  assert.match(review.message ?? '', /pin the image of web/);
});

test('a pod with a version tag or a digest is allowed', async () => {
  for (const image of ['nginx:1.27.3', 'registry.example.com:5000/nginx@sha256:' + 'a'.repeat(64)]) {
    const review = await reviewWebhook(pinnedImages, admissionRequest(pod(image)));
    assert.equal(review.allowed, true, image);
  }
});

test('kubectl debug is judged too', async () => {
  const debug = admissionRequest(pod('nginx:1.27.3'), { oldObject: pod('nginx:1.27.3'), subResource: 'ephemeralcontainers' });
  assert.equal((await reviewWebhook(pinnedImages, debug)).called, true);
});

test('a deployment gets the label and TZ=UTC in every container', async () => {
  const deployment: ObjectOf<'Deployment'> = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', namespace: 'shop' },
    spec: { selector: {}, template: { spec: { containers: [{ name: 'api', image: 'api:1' }] } } },
  };
  const review = await reviewWebhook(workloadDefaults, admissionRequest(deployment));
  assert.equal(review.allowed, true);
  assert.equal(review.object?.metadata?.labels?.['example.com/defaulted'], 'true');
  assert.deepEqual(review.object?.spec?.template.spec?.containers[0]?.env, [{ name: 'TZ', value: 'UTC' }]);
});
