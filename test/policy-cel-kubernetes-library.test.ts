// Kubernetes' CEL library, entry by entry, against the expected values of Kubernetes' own tests
// (k8s.io/apiserver v0.36.3 pkg/cel/library/*_test.go; cel-go v0.26.0 ext/*_test.go, the cel-go
// Kubernetes 1.36 vendors; apimachinery resource/quantity_test.go), and each entry's version
// (pkg/cel/environment/base.go): it does not compile in the version before it arrived.
import t from 'tap';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { toCel } from '../src/cel/values.js';

const current = environmentWith(VALIDATION_VARIABLES);

function run(source: string, object: unknown = {}): unknown {
  const compiled = compileExpression(current, source, 'any');
  if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
  return compiled.expression.evaluate({ object: toCel(object), variables: {} }, new EvaluationBudget());
}

/** [expression, expected]: each `expected` is Kubernetes' test's; true-valued comparisons keep its literal form. */
const VALUES: [string, unknown][] = [
  // quantity_test.go
  ['quantity("200M") == quantity("200M")', true],
  ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', true],
  ['quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', true],
  ['quantity("200M") == quantity("0.3G")', false],
  ['quantity("50M").isLessThan(quantity("50Mi"))', true],
  ['quantity("50Mi").isGreaterThan(quantity("50M"))', true],
  ['quantity("200M").compareTo(quantity("0.2G"))', 0n],
  ['quantity("50M").compareTo(quantity("50Mi"))', -1n],
  ['quantity("50k").add(quantity("20")) == quantity("50.02k")', true],
  ['quantity("50k").add(20).isLessThan(quantity("50020"))', false],
  ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', true],
  ['quantity("50k").sub(20) == quantity("49980")', true],
  ['quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980n],
  ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20n],
  ['quantity("50k").asInteger()', 50000n],
  ['quantity("9999999999999999999999999999999999999G").isInteger()', false],
  ['quantity("50").isInteger()', true],
  ['quantity("50.703k").asApproximateFloat()', 50703],
  ['isQuantity("20M") && isQuantity("20Mi") && !isQuantity("20Mo") && !isQuantity("10Mm")', true],
  ['[quantity("9999999999999999999999999999999999999")].all(x, x.add(quantity("1")).compareTo(x.add(quantity("2"))) == -1)', true],
  // apimachinery quantity_test.go: every suffix, rounding to nano, binary cap
  ['quantity("1E") == quantity("1000000000000000000") && quantity("1E").asInteger() == 1000000000000000000', true],
  ['quantity("1E-3") == quantity("1m") && quantity("1.3E+6") == quantity("1300k") && quantity("1.01E") == quantity("1010P")', true],
  ['quantity("3.001n") == quantity("4n") && quantity("0.0000000001") == quantity("1n") && quantity("1.1E-9") == quantity("2n")', true],
  ['quantity("100.035Ki") == quantity("102435840m") && quantity("0.5Mi") == quantity("512Ki")', true],
  ['quantity("9Ei").asInteger() == 9223372036854775807', true],
  ['quantity("1.G") == quantity("1G") && quantity(".001") == quantity("1m")', true],
  // cidr_test.go
  ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', true],
  ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', false],
  ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', true],
  ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))', true],
  ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', false],
  ['cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))', false],
  ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', true],
  ['cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', true],
  ['cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', true],
  ['cidr("192.168.0.0/24").prefixLength()', 24n],
  ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', true],
  ['cidr("2001:db8::/32").containsIP("2001:dc8::1")', false],
  ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', true],
  ['cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', false],
  ['cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', true],
  ['string(cidr("192.168.0.0/24"))', '192.168.0.0/24'],
  // ip_test.go
  ['ip("192.168.0.1").family()', 4n],
  ['ip("2001:db8::68").family()', 6n],
  ['ip("127.0.0.1").isLoopback() && ip("::1").isLoopback() && !ip("192.168.0.1").isLoopback()', true],
  ['ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()', true],
  ['ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast() && !ip("224.0.1.1").isLinkLocalMulticast()', true],
  ['ip("169.254.169.254").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()', true],
  ['ip("192.168.0.1").isGlobalUnicast() && ip("2001:db8::68").isGlobalUnicast() && !ip("255.255.255.255").isGlobalUnicast() && !ip("ff00::1").isGlobalUnicast()', true],
  ['ip.isCanonical("127.0.0.1") && ip.isCanonical("2001:db8::68") && !ip.isCanonical("2001:DB8::68") && !ip.isCanonical("2001:db8:0:0:0:0:0:68")', true],
  ['isIP("1.2.3.4") && !isIP("1.2.3.4.5") && !isIP("127.0.0.1%1") && !isIP("::ffff:1.2.3.4")', true],
  ['string(ip("2001:db8:0:0:0:0:0:68"))', '2001:db8::68'],
  // format_test.go
  ['format.dns1123Label().validate("my-label-name").hasValue()', false],
  ['format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-").hasValue()', false],
  ['format.qualifiedName().validate("apiextensions.k8s.io/v1beta1").hasValue()', false],
  ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000").hasValue()', false],
  ['format.byte().validate("aGVsbG8")', undefined],
  ['format.date().validate("2020-01-32").value()', ['invalid date']],
  ['format.datetime().validate("2020-01-32T00:00:00Z").value()', ['invalid datetime']],
  ['format.named("unknown").hasValue()', false],
  ['format.named("dns1123Label").value() == format.dns1123Label() && format.dns1123Label() != format.uuid()', true],
  [
    'format.dns1123Label().validate("contains a space").value()',
    ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"],
  ],
  [
    'format.qualifiedName().validate("contains a space").value()',
    ["name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
  ],
  [
    'format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!").value()',
    ["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
  ],
  // semver_test.go
  ['isSemver("1.2.3-beta.1+build.1") && !isSemver("v1.0.0") && !isSemver(" 1.0.0") && !isSemver("01.01.01") && !isSemver("1.1")', true],
  ['isSemver("v1.0.0", true) && isSemver("01.01.01", true) && isSemver("1", true) && !isSemver(" 1.0.0", true)', true],
  ['semver("v01.01", true) == semver("1.1.0")', true],
  ['semver("1.0.0").isLessThan(semver("1.2.3")) && !semver("1.0.0").isGreaterThan(semver("1.0.0"))', true],
  ['semver("1.0.0").compareTo(semver("1.2.3"))', -1n],
  ['semver("1.2.3").major() + semver("1.2.3").minor() * 10 + semver("1.2.3").patch() * 100', 321n],
  // cel-go ext/sets_test.go (mixed-type literals through dyn(): Kubernetes refuses them as literals)
  ['sets.contains([], []) && sets.contains([1], []) && sets.contains([1, 2, 3, 4], [2, 3])', true],
  ['sets.contains([1], [dyn(1.0), dyn(1)]) && sets.contains([1, 2], [dyn(2u), dyn(2.0)])', true],
  ['!sets.contains([1], [1, 2]) && !sets.contains([1], [dyn("1"), dyn(1)])', true],
  ['sets.equivalent([1], [1, 1]) && sets.equivalent([1, 2, 3], [dyn(3u), dyn(2.0), dyn(1)]) && !sets.equivalent([2, 1], [1])', true],
  ['sets.intersects([1], [1, 2]) && sets.intersects([[1], [2, 3]], [[1, 2], [2, 3]]) && !sets.intersects([], []) && !sets.intersects([1], [2])', true],
  // cel-go ext/strings_test.go and formatting_test.go (the version-1 formatter Kubernetes uses)
  ['"str is %s and some more".format(["filler"])', 'str is filler and some more'],
  ['"%%%s%%".format(["text"])', '%text%'],
  ['"%d %d %d, %s %s %s".format([1, 2, 3, "A", "B", "C"])', '1 2 3, A B C'],
  ['"%.3f".format([1.2345])', '1.234'],
  ['"this is -5 in binary: %b".format([-5])', 'this is -5 in binary: -101'],
  ['"%o".format([11])', '13'],
  ['"%x is 30 in hexadecimal".format([30])', '1e is 30 in hexadecimal'],
  ['"%X".format(["Hello world!"])', '48656C6C6F20776F726C6421'],
  ['"%e".format([2.71828])', '2.718280\u202f\u00d7\u202f10\u2070\u2070'],
  ['"%s".format([0.000000002])', '2e-09'],
  ['"%s".format([[2.71]])', '[2.710000]'],
  ['"null: %s".format([null])', 'null: null'],
  ['"%s".format([duration("1h45m47s")])', '6347s'],
  ['"%s".format([timestamp("2023-02-03T23:31:20+00:00")])', '2023-02-03T23:31:20Z'],
  ['"%s".format([{"key1": "x", "key2": "y"}])', '{"key1":"x", "key2":"y"}'],
  ['strings.quote(\'single-quote with "double quote"\')', '"single-quote with \\"double quote\\""'],
  ['strings.quote("two escape sequences \\a\\n")', '"two escape sequences \\a\\n"'],
  // cel-go ext/lists_test.go
  ['lists.range(4) == [0, 1, 2, 3] && lists.range(0) == []', true],
  ['[5, 1, 2, 3].reverse() == [3, 2, 1, 5]', true],
  ['[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1, 2, 3, 4].slice(4, 4) == []', true],
  ['size(object.nested.flatten()) == 3 && object.nested.flatten()[2] == [3, 4] && object.nested.flatten(2) == [1, 2, 3, 4] && [[1], [], [2, 3]].flatten() == [1, 2, 3]', true],
  ['[4, 3, 2, 1].sort() == [1, 2, 3, 4] && ["d", "a", "b", "c"].sort() == ["a", "b", "c", "d"]', true],
  ['[-3, 1, -5, -2, 4].sortBy(e, -(e * e)) == [-5, 4, -3, -2, 1]', true],
  ['[-2, 5, -2, 1, 1, 5, -2, 1].distinct() == [-2, 5, 1] && [[1], [1], [2]].distinct() == [[1], [2]]', true],
  // cel-go ext/comprehensions_test.go
  ['[1, 2, 3].all(i, j, i < j)', true],
  ["{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v)", false],
  ["{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))", true],
  ["{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))", true],
  ['[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10)', false],
  ['[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1)', false],
  ['[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)', true],
  ['[1, 2, 3].transformList(indexVar, valueVar, (indexVar * valueVar) + valueVar) == [1, 4, 9]', true],
  ['[1, 2, 3].transformList(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == [1, 9]', true],
  ["{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k) == ['greeting', 'farewell']", true],
  ["{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}", true],
  ["{'greeting': 'hello'}.transformMapEntry(keyVar, valueVar, {valueVar: keyVar}) == {'hello': 'greeting'}", true],
  // cel-go cel/library.go (optional library)
  ['optional.ofNonZeroValue(0).hasValue() || optional.ofNonZeroValue("").hasValue() || optional.ofNonZeroValue([]).hasValue()', false],
  ['optional.ofNonZeroValue("hello").value()', 'hello'],
  ["optional.of(2).optMap(i, i * 2).value() == 4 && !optional.none().optMap(i, i * 2).hasValue()", true],
  ["{'key': {'subkey': 'value'}}.?key.optFlatMap(k, k.?subkey).value()", 'value'],
  ['[1, 2, 3].first().value() == 1 && [1, 2, 3].last().value() == 3 && !dyn([]).first().hasValue()', true],
  ['optional.unwrap([optional.of(42), optional.none()]) == [42] && [optional.of(42), optional.none()].unwrapOpt() == [42]', true],
  ['[?optional.of(1), ?optional.none(), 2] == [1, 2]', true],
  ["{?'a': optional.of(1), ?'b': optional.none()} == {'a': 1}", true],
  // has() on a field of any expression (cel-go's rule: the argument is a field selection)
  ['has(object.spec.containers[0].securityContext)', true],
  ['has(object.spec.containers[1].securityContext)', false],
  // lists.go (library.Lists v0), its documented examples: sum over int, double, duration; min/max/isSorted over comparable types
  ['[1, 3].sum()', 4n],
  ['[1.0, 3.0].sum()', 4],
  ["[duration('1m'), duration('1s')].sum() == duration('1m1s')", true],
  ['[].sum()', 0n],
  ['[1u, 2u].sum() == 3u', true],
  ['[1, 2, 3].isSorted()', true],
  ["['a', 'b', 'b', 'c'].isSorted()", true],
  ['[2.0, 1.0].isSorted()', false],
  ['[1].isSorted() && [].isSorted()', true],
  ['[1, 3].min()', 1n],
  ['[1, 3].max()', 3n],
  ['[1].min()', 1n],
  ['([0] + [].map(x, x + 1)).min()', 0n],
  ['[1, 2, 2, 3].indexOf(2)', 1n],
  ["['a', 'b', 'b', 'c'].lastIndexOf('b')", 2n],
  ['[1.0].indexOf(1.1)', -1n],
  ["[].indexOf('string')", -1n],
  // comparable and equatable beyond numbers and strings (the templated overloads of lists.go)
  ["[duration('2s'), duration('1s')].min() == duration('1s') && [timestamp('2024-01-01T00:00:00Z'), timestamp('2025-01-01T00:00:00Z')].isSorted()", true],
  ["[false, true].isSorted() && ![true, false].isSorted() && [b'a', b'b'].max() == b'b'", true],
  ["[duration('1s'), duration('2s')].indexOf(duration('2s')) == 1 && [1u, 2u].lastIndexOf(2u) == 1", true],
  // the same equality inside lists and sets.* as with == (quantity_test.go's 200M == 0.2G; durations by value)
  ["sets.contains([quantity('200M')], [quantity('0.2G')]) && !sets.contains([quantity('200M')], [quantity('0.3G')])", true],
  ["sets.contains([duration('1s')], [duration('2s')]) || sets.equivalent([semver('1.0.0')], [semver('2.0.0')])", false],
  // cel-go common/stdlib/standard.go's conversion examples
  ['int(123u)', 123n],
  ["int(duration('1s'))", 1000000000n],
  ["int(timestamp('1970-01-01T00:00:01Z'))", 1n],
  ["string(timestamp('1970-01-01T00:00:00Z'))", '1970-01-01T00:00:00Z'],
  ["string(duration('1h30m'))", '5400s'],
  ["timestamp(1) == timestamp('1970-01-01T00:00:01Z')", true],
];

t.test('each library entry gives the value Kubernetes tests expect', async (t) => {
  const pod = { spec: { containers: [{ name: 'a', securityContext: {} }, { name: 'b' }] }, nested: [1, [2, [3, 4]]] };
  for (const [source, expected] of VALUES) {
    let value: unknown;
    try {
      value = run(source, pod);
    } catch (error) {
      t.fail(`${source}: ${(error as Error).message}`);
      continue;
    }
    if (expected === undefined) t.ok(value !== undefined, source);
    else t.same(value, expected, source);
  }
});

/** [expression, the error Kubernetes' test expects (a pattern)]. */
const ERRORS: [string, RegExp][] = [
  ['quantity("10Mo")', /quantities must match the regular expression/],
  ['quantity("10Mm")', /unable to parse quantity's suffix/],
  ['quantity("9999999999999999999999999999999999999G").asInteger()', /cannot convert value to integer/],
  ['cidr("192.168.0.0/")', /netip\.ParsePrefix\("192\.168\.0\.0\/"\): bad bits after slash: ""/],
  ['ip("::ffff:c0a8:1")', /IPv4-mapped IPv6 address "::ffff:c0a8:1" is not allowed/],
  ['cidr("::ffff:c0a8:0/120")', /IPv4-mapped IPv6 address .* is not allowed/],
  ['ip("fe80::1%eth0")', /with zone value is not allowed/],
  ['ip("01.2.3.4")', /parse error/],
  ['semver("v1.0")', /No Major\.Minor\.Patch elements found/],
  ['[1, 2, 3, 4].slice(3, 0)', /cannot slice\(3, 0\), start index must be less than or equal to end index/],
  ['[1, 2, 3, 4].slice(0, 10)', /cannot slice\(0, 10\), list is length 4/],
  ['[1, 2, 3, 4].slice(-5, 10)', /cannot slice\(-5, 10\), negative indexes not supported/],
  ['[].flatten(-1)', /level must be non-negative/],
  ['[dyn("d"), dyn(3)].sort()', /list elements must have the same type/],
  // formatting_test.go's runtime cases (skipCompileCheck): arguments the validator cannot see through
  ['"%a".format([dyn(1)].map(x, x))', /unrecognized formatting clause "a"/],
  ['"%d %d %d".format([0, 1].map(x, x))', /index 2 out of range/],
  ['"string is %b".format([dyn("abc")])', /only integers and bools can be formatted as binary, was given string/],
  ["{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(keyVar, valueVar, {valueVar: keyVar})", /already exists/],
  // integer overflow: cel-go's negateInt64Checked, divideInt64Checked, moduloInt64Checked, doubleToInt64Checked
  ['-(-9223372036854775807 - 1)', /integer overflow/],
  ['(-9223372036854775807 - 1) / -1', /integer overflow/],
  ['(-9223372036854775807 - 1) % -1', /integer overflow/],
  ['int(9223372036854775807.0)', /integer overflow/],
  ['int(-1e19)', /integer overflow/],
  ['9223372036854775807 + 1', /integer overflow/],
  // uint64ToInt64Checked; Int.Add inside lists.go's sum()
  ['int(18446744073709551615u)', /integer overflow/],
  ['[9223372036854775807, 1].sum()', /integer overflow/],
  ['[18446744073709551615u, 1u].sum()', /nsigned integer overflow/],
  // lists.go's cmp on an empty list
  ['[].min()', /min called on empty list/],
  ['[].max()', /max called on empty list/],
];

t.test('each library entry fails where Kubernetes tests expect an error', async (t) => {
  for (const [source, error] of ERRORS) t.throws(() => run(source), { message: error }, source);
});

/** [expression, the version it compiles from]: refused in the version before. */
const ARRIVALS: [string, number][] = [
  ["quantity('1') == quantity('1')", 28],
  ['[?optional.of(1)] == [1]', 28],
  ['optional.ofNonZeroValue(1).hasValue()', 28],
  ['1 < 1.5', 28],
  ["'%d'.format([1]) == '1'", 29],
  ["strings.quote('a') == '\"a\"'", 29],
  ['sets.contains([1], [1])', 29],
  ["optional.of(1).optFlatMap(x, optional.of(x)).hasValue()", 29],
  ["ip('1.2.3.4').family() == 4", 30],
  ["cidr('10.0.0.0/8').containsIP('10.0.0.1')", 30],
  ["format.dns1123Label().validate('a').hasValue()", 31],
  ['[1].all(i, v, v > 0)', 32],
  ["semver('1.0.0').major() == 1", 33],
  ['[1].first().hasValue()', 33],
  ['lists.range(2) == [0, 1]', 34],
];

t.test('each entry compiles from the Kubernetes version it arrived in, and not before', async (t) => {
  for (const [source, since] of ARRIVALS) {
    const at = compileExpression(environmentWith(['object'], { major: 1, minor: since }), source, 'bool');
    const before = compileExpression(environmentWith(['object'], { major: 1, minor: since - 1 }), source, 'bool');
    t.ok(at.ok, `${source} compiles in 1.${since}${at.ok ? '' : `: ${at.problem}`}`);
    t.notOk(before.ok, `${source} does not compile in 1.${since - 1}`);
  }
});

t.test('literal validators arrive in 1.29 (base.go: ValidateDurationLiterals, ValidateTimestampLiterals, ValidateRegexLiterals)', async (t) => {
  const compiles = (source: string, minor: number) => compileExpression(environmentWith(['object'], { major: 1, minor }), source, 'any').ok;
  for (const source of ["duration('1x') > duration('1s')", "timestamp('yesterday') > timestamp('2024-01-01T00:00:00Z')", "'a'.matches('[')", "object.name.find('(') == ''"]) {
    t.ok(compiles(source, 28), `${source}: stored by a 1.28 kube-apiserver (an error when it runs)`);
    t.notOk(compiles(source, 29), `${source}: refused from 1.29`);
  }
});

t.test('aggregate literals: assignable types before 1.29, the same type from 1.29 (except inside format())', async (t) => {
  const compiles = (source: string, minor: number) => compileExpression(environmentWith(['object'], { major: 1, minor }), source, 'any').ok;
  t.notOk(compiles("[1, 'a']", 28), "[1, 'a'] is refused in every version");
  t.notOk(compiles("{'a': 1, 'b': 'x'}", 28), 'so are mixed map values');
  t.ok(compiles("[object.name, 'a']", 28), 'a dyn element is assignable before 1.29');
  t.notOk(compiles("[object.name, 'a']", 29), 'and refused from 1.29 (expected type dyn but found string)');
  t.ok(compiles("'%s %d'.format([object.name, 1])", 29), 'except in a format() argument');
  t.ok(compiles('[object.a, object.b]', 36), 'dyn with dyn is the same type');
  t.notOk(compiles("duration('1x') > duration('1s')", 29), 'an invalid duration literal is refused from 1.29');
  t.ok(compiles("duration('1x') > duration('1s')", 28), 'and only an evaluation error before');
});

/** cel-go formatting_test.go's compile-time cases: [format, arguments, the error it expects]. */
const FORMAT_COMPILE_ERRORS: [string, string, string][] = [
  ['%s %s', '"abc"', 'index 1 out of range'],
  ['%s %s', '"abc", "def", "ghi"', 'too many arguments supplied to string.format (expected 2, got 3)'],
  ['filler %', '', 'unexpected end of string'],
  ['%j', '123', 'could not parse formatting clause: unrecognized formatting clause "j"'],
  // ext.TestAllTypes there; request (an object type in both) here
  ['object is %s', 'request', 'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps'],
  ['list is %s', '[1, 2, request]', 'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps'],
  ['int is %d', '5.2', 'error during formatting: decimal clause can only be used on integers'],
  ['double is %f', 'true', 'error during formatting: fixed-point clause can only be used on doubles'],
  ['double is %.34', '5.0', 'could not parse formatting clause: error while parsing precision: could not find end of precision specifier'],
  ['double is %e', 'true', 'error during formatting: scientific clause can only be used on doubles'],
  ['string is %b', '"a string"', 'error during formatting: only integers and bools can be formatted as binary'],
  ['%x is a double', '2.5', 'error during formatting: only integers, byte buffers, and strings can be formatted as hex'],
  ['%X is a double', '2.5', 'error during formatting: only integers, byte buffers, and strings can be formatted as hex'],
  ['an octal: %o', '3.14', 'error during formatting: octal clause can only be used on integers'],
];

t.test('format() on a literal string is checked against its arguments at compile time (from 1.29, with ext.Strings)', async (t) => {
  const env = environmentWith(['object', 'request']);
  for (const [format, args, error] of FORMAT_COMPILE_ERRORS) {
    const source = `${JSON.stringify(format)}.format([${args}])`;
    const result = compileExpression(env, source, 'string');
    t.notOk(result.ok, `${source} does not compile`);
    if (!result.ok) t.ok(result.problem.includes(error), `${source}: ${error}`);
  }
  const compiles = (source: string) => compileExpression(env, source, 'string').ok;
  t.ok(compiles('"%s and %d".format([object.name, object.count])'), 'dyn arguments fit any clause');
  t.ok(compiles('"%x %X %b %o %e %.2f %s %s".format([1, "ab", true, 2u, 1.5, "NaN", [1, [2.0]], {"a": [null]}])'), 'every clause with a type it takes');
  t.ok(compiles('"%%%s%%".format(["x"])'), '%% takes no argument');
  t.ok(compiles('"%d".format(object.list)'), 'arguments that are no list literal are checked when evaluated');
  t.ok(compiles("('%d' + '').format(['a'])"), 'a format string that is no literal is checked when evaluated');
  t.ok(compileExpression(environmentWith(['object'], { major: 1, minor: 29 }), '"%d".format([1])', 'string').ok);
  t.notOk(compileExpression(environmentWith(['object'], { major: 1, minor: 29 }), '"%d".format(["1"])', 'string').ok, 'checked from 1.29, where format arrives');
});

t.test('sets.* take two lists of one element type, as cel-go checks list(T), list(T)', async (t) => {
  const problem = (source: string) => {
    const result = compileExpression(current, source, 'bool');
    return result.ok ? undefined : result.problem;
  };
  t.match(problem("sets.contains([1], ['a'])"), /found no matching overload for 'sets\.contains\(list<int>, list<string>\)'/);
  t.match(problem('sets.intersects([1], [1.0])'), /no matching overload/, 'int and double are different types');
  t.match(problem('sets.equivalent([[1]], [["a"]])'), /no matching overload/, 'at any depth');
  t.match(problem("sets.contains([1], [1u])"), /no matching overload/);
  t.equal(problem('sets.contains([1], [dyn(1.0)])'), undefined, 'a dyn element fits any type (cel-go sets_test.go)');
  t.equal(problem("sets.contains(object.items, ['a'])"), undefined, 'so does a dyn list');
  t.equal(problem('sets.intersects([[1], [2, 3]], [[1, 2], [2, 3]])'), undefined);
});

t.test('request is the typed AdmissionRequest: a field kube-apiserver does not declare does not compile', async (t) => {
  const problem = (source: string) => {
    const result = compileExpression(current, source, 'any');
    return result.ok ? undefined : result.problem;
  };
  t.match(problem('request.usrInfo.username'), /No such key: usrInfo/);
  t.match(problem('request.uid'), /No such key: uid/, 'uid is omitted from the type');
  t.equal(problem("request.userInfo.groups.exists(g, g == 'system:masters') && request.kind.kind == 'Pod' && request.dryRun"), undefined);
});

t.test('matchConditions compile as the target kube-apiserver compiles a written configuration: its version minus one, typed request', async (t) => {
  const { compileMatchCondition } = await import('../src/cel/match-conditions.js');
  const ipCondition = "ip('10.0.0.1').family() == 4";
  t.match(compileMatchCondition(ipCondition, { major: 1, minor: 30 }), /does not compile/, 'kube-apiserver 1.30 compiles new expressions with 1.29, which has no ip()');
  t.type(compileMatchCondition(ipCondition, { major: 1, minor: 31 }), 'object', 'kube-apiserver 1.31 does');
  t.match(compileMatchCondition('request.usrInfo.username == "a"'), /No such key: usrInfo/, 'a typo in request is a load error');
  t.type(compileMatchCondition("request.userInfo.username != 'system:admin'"), 'object');
});
