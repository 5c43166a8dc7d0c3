import fc from 'fast-check';
import t from 'tap';
import { stringify } from 'yaml';
import { toolsPods } from '../bench/tools-workload.js';
import { asDecodedByKubeApiserver } from '../src/kube/evaluation/kube-defaults/apply-defaults.js';
import { plainYaml } from '../src/tools/plain-yaml.js';

// The oracle is the `yaml` package itself: whatever plainYaml() writes must be stringify()'s text.
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);

/** Strings near every edge of plain YAML: numbers, booleans, nulls, indicators, spaces, quotes, colons, markers. */
const tricky = fc.oneof(
  fc.constantFrom('', '-', '--', '---x', '...x', '.5', '1', '-1', '+1', '0o17', '0x1F', '1e3', '1.', '.inf', '.nan', 'true', 'False', 'NULL', '~', 'yes', 'a:', 'a:b', 'a: b', 'x #y', '#x', '@x', 'a@b', "it's", 'say "hi"', 'a b', ' a', 'a ', 'a\nb', 'a\tb', '100m', '512Mi', 'nginx:latest', 'http://x/y', '-x', 'a=b', 'a+b', '*x', '&x', '!x', '%x', '?x', '? x', '[x]', '{x}', 'a,b', 'ü', '\u0007'),
  fc.string({ unit: fc.constantFrom(...'aZ09_./-:@=+ #"\'\n,[]{}~!?&*%|>`'.split('')), maxLength: 12 }),
  fc.string({ unit: fc.constantFrom('a', 'b', '-', '.', '/', '1'), minLength: 30, maxLength: 90 }),
);

const scalar = fc.oneof(tricky, fc.integer(), fc.double(), fc.constant(-0), fc.constant(2 ** 60), fc.boolean(), fc.constant(null), fc.constant(undefined));

const { tree } = fc.letrec<{ tree: unknown; map: unknown; list: unknown }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('map'), tie('list')),
  map: fc.dictionary(tricky, tie('tree'), { maxKeys: 5 }),
  list: fc.array(tie('tree'), { maxLength: 4 }),
}));

/** Objects with one value reached twice, which stringify() writes as an anchor and an alias. */
const shared = fc.tuple(fc.dictionary(fc.constantFrom('a', 'b'), scalar), fc.boolean()).map(([inner, asList]) => (asList ? { x: [inner, inner] } : { x: inner, y: inner }));

t.test('whatever plainYaml writes is what stringify writes', async (t) => {
  let written = 0;
  const agrees = (value: unknown): boolean => {
    const text = plainYaml(value);
    if (text === undefined) return true;
    written++;
    return text === stringify(value);
  };
  fc.assert(fc.property(fc.dictionary(tricky, tree, { maxKeys: 6 }), agrees), { numRuns: RUNS });
  fc.assert(fc.property(tree, agrees), { numRuns: RUNS });
  fc.assert(fc.property(shared, (value) => plainYaml(value) === undefined && stringify(value).includes('&')), { numRuns: 50 });
  // Not vacuous: a good share of the generated objects went the direct way.
  t.ok(written > RUNS / 10, `written directly for ${written} values`);
});

t.test('deeply indented values, where stringify folds long double-quoted ones', async (t) => {
  let written = 0;
  for (let depth = 0; depth < 40; depth += 3) {
    for (const text of ['1'.repeat(40), `1.${'2'.repeat(38)}`, `0x${'f'.repeat(38)}`, '12', 'a'.repeat(90), 'a:b/'.repeat(30), `-${'9'.repeat(39)}`]) {
      for (const inList of [false, true]) {
        let value: unknown = inList ? [text] : { k: text };
        for (let d = 0; d < depth; d++) value = inList && d % 2 === 1 ? [value] : { [`key${d}`]: value };
        const yaml = plainYaml(value);
        if (yaml === undefined) continue;
        written++;
        t.equal(yaml, stringify(value), `${text} at depth ${depth}${inList ? ' in lists' : ''}`);
      }
    }
  }
  t.ok(written > 50, `written directly for ${written} values`);
});

t.test('a decoded Pod is written directly, as stringify writes it', async (t) => {
  for (const pod of toolsPods(20).map((p) => asDecodedByKubeApiserver(p))) {
    const text = plainYaml(pod);
    t.equal(text, stringify(pod));
  }
});

t.test('what only stringify writes right is left to it', async (t) => {
  const sharedLabels = { app: 'web' };
  // eslint-disable-next-line no-sparse-arrays -- a hole, which stringify() writes as null
  for (const value of [{ a: [1, , 2] }, { a: 'x y' }, { a: 0.5 }, { a: -0 }, { a: undefined }, { a: new Date(0) }, { a: sharedLabels, b: sharedLabels }, ['a'], 'text', { ['a '.repeat(3)]: 1 }, { a: '1'.repeat(70) }]) {
    t.equal(plainYaml(value), undefined, JSON.stringify(value) ?? String(value));
  }
  t.equal(plainYaml({}), stringify({}));
});
