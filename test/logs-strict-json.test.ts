/**
 * The strict JSON reader every log line of the suite goes through (test/support/logs/): it reads
 * what JSON.parse reads, refuses what JSON.parse refuses, and refuses an object that names a key
 * twice, at any depth, which JSON.parse lets through keeping the last.
 */
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { DuplicateKeyError, parseStrictJson, StrictJsonError } from './support/logs/strict-json.js';

function outcome(read: (text: string) => unknown, text: string): { value: unknown } | { error: unknown } {
  try {
    return { value: read(text) };
  } catch (error) {
    return { error };
  }
}

t.test('any JSON value reads as JSON.parse reads it, compact or indented', async (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom(undefined, 2, '\t'), (value, indent) => {
      const text = JSON.stringify(value, null, indent);
      return isDeepStrictEqual(parseStrictJson(text), JSON.parse(text));
    }),
    { numRuns: 300 },
  );
  t.pass('300 values');
});

t.test('text JSON.parse refuses is refused; text it reads is read alike (or refused for a repeated key)', async (t) => {
  // Tokens, good and bad, strung together: the grammar's edges come up often.
  const TOKENS = ['{', '}', '[', ']', ',', ':', ' ', '\n', '"k"', '"a b"', '0', '00', '-0', '-', '1.5', '1.', '.5', '1e5', '1E+2', '1e', 'true', 'tru', 'null', 'nul', 'NaN', '"\\n"', '"\\/"', '"\n"', '"\t"', '"\\x"', '"\\u00e9"', '"\\u00"', '"\\u00zz"', '"\\ud83d"', "'k'", '"'];
  const tokens = fc.array(fc.constantFrom(...TOKENS), { maxLength: 12 }).map((parts) => parts.join(''));
  const cut = fc.json({ maxDepth: 3 }).chain((text) => fc.nat(text.length).map((n) => text.slice(0, n)));
  fc.assert(
    fc.property(fc.oneof(tokens, cut, fc.json({ maxDepth: 3 })), (text) => {
      const strict = outcome(parseStrictJson, text);
      const loose = outcome(JSON.parse, text);
      if ('error' in loose) return 'error' in strict && strict.error instanceof StrictJsonError && !(strict.error instanceof DuplicateKeyError);
      if ('error' in strict) return strict.error instanceof DuplicateKeyError;
      return isDeepStrictEqual(strict.value, loose.value);
    }),
    { numRuns: 5000 },
  );
  t.pass('5000 texts');
  const edges = ['00', '-0', '-', '1.', '.5', '1E+2', '1e', '"\n"', '"\t"', '"\\x"', '"\\u00"', '"\\u00zz"', '"\\ud83d"', '"\\/"', '[1,]', '{"a":1,}', '{"a" 1}', "{'a':1}", '', ' ', 'tru', '1 2', '{}{', '"'];
  for (const text of edges) {
    const strict = outcome(parseStrictJson, text);
    const loose = outcome(JSON.parse, text);
    t.same('error' in strict ? 'refused' : strict.value, 'error' in loose ? 'refused' : loose.value, `as JSON.parse: ${JSON.stringify(text)}`);
  }
});

t.test('a key named twice in one object is refused, naming the key and the object', async (t) => {
  const cases: [text: string, key: string, path: string][] = [
    ['{"name":"kube-admission-server","kind":"policy","name":"kas-max-replicas"}', 'name', '$'],
    ['{"entries":[{"entry":"a"},{"entry":"b","entry":"c"}]}', 'entry', '$.entries[1]'],
    ['{"a":{"b":{"c":1,"c":1}}}', 'c', '$.a.b'],
    ['{"name":1,"na\\u006de":2}', 'name', '$'],
    ['{"":1,"":2}', '', '$'],
  ];
  for (const [text, key, path] of cases) {
    t.doesNotThrow(() => JSON.parse(text), 'JSON.parse lets it through');
    const error = outcome(parseStrictJson, text);
    t.ok('error' in error && error.error instanceof DuplicateKeyError, text);
    if ('error' in error) t.match(error.error, { key, path, message: `key ${JSON.stringify(key)} appears twice in ${path} at offset ` });
  }
});

t.test('the same key in different objects is no repetition', async (t) => {
  t.same(parseStrictJson('[{"name":1},{"name":2}]'), [{ name: 1 }, { name: 2 }]);
  t.same(parseStrictJson('{"name":{"name":1},"withheld":[{"name":"a"}]}'), { name: { name: 1 }, withheld: [{ name: 'a' }] });
  const proto = parseStrictJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
  t.ok(Object.hasOwn(proto, '__proto__'), '"__proto__" is an own key, as JSON.parse makes it');
  t.equal(({} as Record<string, unknown>)['polluted'], undefined, 'no prototype touched');
});
