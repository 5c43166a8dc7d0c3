// The server's diff (src/admission/json-diff.ts) against fast-json-patch's compare(), which the server
// used before and whose output the rest of the suite pins: the same operations in the same order
// for generated pairs of documents, and applying them (fast-json-patch's applyPatch, not the code
// under test) turns the first document into the second. JSON_DIFF_SEED=<seed> replays a failure.
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import jsonPatch from 'fast-json-patch';
import t, { type Test } from 'tap';
import { diffJson } from '../src/admission/json-diff.js';

const SEED = Number(process.env['JSON_DIFF_SEED'] ?? Date.now() % 1_000_000);
const RUNS = 3000;
t.comment(`seed ${SEED} (JSON_DIFF_SEED=${SEED} replays it)`);

type Json = Record<string, unknown> | unknown[];

// Keys that need RFC 6901 escaping, array-index-like keys, and the keys a Pod has.
const key = fc.oneof(fc.constantFrom('a', 'b', 'metadata', 'labels', 'x/y', 'a~b', '~1', '0', '1', '', 'é'), fc.string({ maxLength: 4 }));
const leaf = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }));
const { tree } = fc.letrec<{ tree: unknown; node: Json }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('node')),
  node: fc.oneof(fc.dictionary(key, tie('tree'), { maxKeys: 5 }), fc.array(tie('tree'), { maxLength: 5 })),
}));
const document = fc.dictionary(key, tree, { maxKeys: 6 });

/** A second document made by editing a copy of the first: the pairs a handler makes (a few changes in a large object). */
function edited(original: Record<string, unknown>, edits: { path: number[]; action: 'delete' | 'set' | 'push' | 'pop'; value: unknown }[]): Record<string, unknown> {
  const copy = structuredClone(original);
  for (const edit of edits) {
    let node: Json = copy;
    for (const step of edit.path) {
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const next = (node as Record<string, unknown>)[keys[step % keys.length] as string];
      if (typeof next !== 'object' || next === null) break;
      node = next as Json;
    }
    const keys = Object.keys(node);
    const target = keys.length > 0 ? (keys[(edit.path[0] ?? 0) % keys.length] as string) : 'new';
    if (Array.isArray(node)) {
      if (edit.action === 'push') node.push(edit.value);
      else if (edit.action === 'pop') node.pop();
      else if (edit.action === 'delete') node.splice(Number(target), 1);
      else node[Number(target)] = edit.value;
    } else if (edit.action === 'delete') delete node[target];
    else node[edit.action === 'set' ? target : `${target}+`] = edit.value;
  }
  return copy;
}
const edit = fc.record({ path: fc.array(fc.nat(8), { maxLength: 4 }), action: fc.constantFrom('delete', 'set', 'push', 'pop'), value: tree });

/** A document as JSON sees it (no undefined, plain prototypes); key order is left to isDeepStrictEqual, which ignores it. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** The same operations as fast-json-patch; unless `appliesAs` is false, they turn `before` into `after` as JSON sees it. */
function agree(t: Test, before: Json, after: Json, appliesAs = true): void {
  const actual = diffJson(before, after);
  t.same(actual, jsonPatch.compare(before, after));
  if (!appliesAs) return;
  const applied = jsonPatch.applyPatch(structuredClone(before), structuredClone(actual) as jsonPatch.Operation[], true).newDocument;
  t.same(applied, asJson(after), 'the operations turn the first document into the second');
}

t.test('the same operations as fast-json-patch for documents edited in a few places', async (t) => {
  fc.assert(
    fc.property(document, fc.array(edit, { minLength: 0, maxLength: 4 }), (original, edits) => {
      const after = edited(original, edits);
      const expected = jsonPatch.compare(original, after);
      const actual = diffJson(original, after);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`differs:\n${JSON.stringify(actual)}\n${JSON.stringify(expected)}`);
      const applied = jsonPatch.applyPatch(structuredClone(original), structuredClone(actual) as jsonPatch.Operation[], true).newDocument;
      if (!isDeepStrictEqual(asJson(applied), asJson(after))) throw new Error('the operations do not turn the first document into the second');
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  t.pass(`${RUNS} edited pairs agree`);
});

t.test('the same operations as fast-json-patch for unrelated documents', async (t) => {
  fc.assert(
    fc.property(document, document, (before, after) => {
      const expected = jsonPatch.compare(before, after);
      const actual = diffJson(before, after);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Error(`differs:\n${JSON.stringify(actual)}\n${JSON.stringify(expected)}`);
    }),
    { seed: SEED + 1, numRuns: RUNS, endOnFailure: true },
  );
  t.pass(`${RUNS} unrelated pairs agree`);
});

t.test('listed cases', async (t) => {
  const pod = () => ({ metadata: { name: 'web', labels: { app: 'web' } }, spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] } });
  const cases: [string, Json, Json, boolean?][] = [
    ['equal documents', pod(), pod()],
    ['a label added whose key needs escaping', pod(), { ...pod(), metadata: { name: 'web', labels: { app: 'web', 'example.com/x~y': '1' } } }],
    ['two containers removed from an array (highest index first)', pod(), { ...pod(), spec: { containers: [{ name: 'a' }] } }],
    ['a value undefined in the new object is a removal', pod(), { ...pod(), metadata: { name: 'web', labels: undefined } } as unknown as Json],
    ['undefined in an array becomes a null replace', { a: [1, 2] }, { a: [1, undefined] }],
    ['an array replaced by an object', { a: [1] }, { a: { 0: 1 } }],
    ['a root array against a root object', [1, 2], { 0: 1 }],
    // toJSON() turns the Date into a string, which fast-json-patch then walks as an object of characters.
    ['a Date through toJSON', { at: { t: 1 } }, { at: new Date(0) } as unknown as Json, false],
    ['an object inserted is copied, not shared', { a: 1 }, { a: 1, b: { c: [1, { d: 2 }] } }],
  ];
  for (const [label, before, after, appliesAs] of cases) t.test(label, async (t) => agree(t, before, after, appliesAs));
  const inserted = { c: 1 };
  const [operation] = diffJson({}, { b: inserted });
  t.not(operation?.value, inserted, 'the operation holds its own copy of an inserted object');
});

t.test('neither document is changed', async (t) => {
  const before = { a: { b: [1, 2, 3] }, c: 'x' };
  const after = { a: { b: [1] }, d: { e: 1 } };
  const [beforeText, afterText] = [JSON.stringify(before), JSON.stringify(after)];
  diffJson(before, after);
  t.equal(JSON.stringify(before), beforeText);
  t.equal(JSON.stringify(after), afterText);
});
