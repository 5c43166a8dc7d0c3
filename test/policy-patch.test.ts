import t from 'tap';
import { applyPatch, computePatch, copyObject } from '../src/admission/patch.js';
import type { KubeObject } from '../src/admission/types.js';

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

t.test('copyObject: a deep copy that shares nothing with its input', async (t) => {
  const input = JSON.parse('{"a":{"b":[1,{"c":"d"},[null,true]]},"e":"f","g":null}') as Record<string, unknown>;
  const copy = copyObject(input);
  t.equal(JSON.stringify(copy), JSON.stringify(input));
  const inner = (value: Record<string, unknown>) => (value.a as { b: unknown[] }).b;
  t.not(copy.a, input.a);
  t.not(inner(copy), inner(input));
  t.not(inner(copy)[1], inner(input)[1]);
  t.not(inner(copy)[2], inner(input)[2]);
});

t.test('copyObject: a "__proto__" key stays an own key and does not become the prototype', async (t) => {
  const input = JSON.parse('{"data":{"__proto__":{"polluted":"yes"},"x":"1"}}') as { data: Record<string, unknown> };
  const copy = copyObject(input);
  t.equal(Object.getPrototypeOf(copy.data), Object.prototype);
  t.ok(Object.prototype.hasOwnProperty.call(copy.data, '__proto__'));
  t.equal((copy.data as { polluted?: string }).polluted, undefined);
  t.equal(JSON.stringify(copy), JSON.stringify(input), 'the key survives a round trip to JSON');
});

t.test('copyObject: values that are no plain object keep their type (a Date stays a Date)', async (t) => {
  const at = new Date(1_700_000_000_000);
  const copy = copyObject({ spec: { at, list: [at] } });
  t.ok(copy.spec.at instanceof Date);
  t.not(copy.spec.at, at);
  t.equal(copy.spec.at.getTime(), at.getTime());
  t.ok(copy.spec.list[0] instanceof Date);
});

t.test('copyObject: a key inherited from a polluted Object.prototype is not copied in', async (t) => {
  const input = JSON.parse('{"metadata":{"name":"web"}}') as Record<string, unknown>;
  Object.defineProperty(Object.prototype, 'injected', { value: 'x', enumerable: true, configurable: true, writable: true });
  let copy: Record<string, unknown>;
  try {
    copy = copyObject(input);
  } finally {
    delete (Object.prototype as Record<string, unknown>).injected;
  }
  t.same(Object.keys(copy), ['metadata']);
  t.same(Object.keys(copy.metadata as object), ['name']);
});
