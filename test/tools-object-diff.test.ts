import t from 'tap';
import { objectDiff } from '../src/tools/object-diff.js';

// The expected lines are written out by hand: YAML of flat maps is one line per key.
const seven = { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 };

t.test('one change: the line before and after it as context, nothing else', async (t) => {
  t.same(objectDiff(seven, { ...seven, d: 40 }), ['  c: 3', '+ d: 40', '- d: 4', '  e: 5']);
});

t.test('changes four lines apart: the unchanged run between their contexts is one "..."', async (t) => {
  t.same(objectDiff(seven, { ...seven, b: 20, g: 70 }), ['  a: 1', '+ b: 20', '- b: 2', '  c: 3', '  ...', '  f: 6', '+ g: 70', '- g: 7']);
});

t.test('changes two unchanged lines apart: their contexts touch, no "..."', async (t) => {
  t.same(objectDiff(seven, { ...seven, b: 20, e: 50 }), ['  a: 1', '+ b: 20', '- b: 2', '  c: 3', '  d: 4', '+ e: 50', '- e: 5', '  f: 6']);
});

t.test('a wider context shows more lines around each change', async (t) => {
  t.same(objectDiff(seven, { ...seven, d: 40 }, 2), ['  b: 2', '  c: 3', '+ d: 40', '- d: 4', '  e: 5', '  f: 6']);
});

t.test('equal objects: no lines', async (t) => {
  t.same(objectDiff(seven, { ...seven }), []);
});
