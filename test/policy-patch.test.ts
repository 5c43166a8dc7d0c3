import t from 'tap';
import { applyPatch, computePatch } from '../src/policy/patch.js';
import type { KubeObject } from '../src/policy/types.js';

const pod = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'nginx' }, { name: 'd', image: 'redis' }] },
});

t.test('no change gives an empty patch', async (t) => {
  t.same(computePatch(pod(), pod()), []);
});

t.test('the patch turns the original into the desired object', async (t) => {
  const desired = pod();
  desired.metadata!.labels!['team'] = 'a';
  desired.metadata!.annotations = { 'example.com/owner': 'x/y~z' };
  (desired.spec as { containers: unknown[] }).containers.splice(0, 1);
  const ops = computePatch(pod(), desired);
  t.ok(ops.length > 0);
  t.same(applyPatch(pod(), ops), desired);
  t.ok(ops.some((o) => o.path === '/metadata/annotations'), 'a whole new map is added in one operation');
});

t.test('keys with "/" and "~" are escaped as RFC 6901 requires', async (t) => {
  const original = pod();
  const desired = pod();
  desired.metadata!.labels!['example.com/tier~1'] = 'front';
  const ops = computePatch(original, desired);
  t.same(ops, [{ op: 'add', path: '/metadata/labels/example.com~1tier~01', value: 'front' }]);
  t.same(applyPatch(original, ops), desired);
  t.same(original, pod(), 'applyPatch leaves its input alone');
});
