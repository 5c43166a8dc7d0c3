// CEL type checking as cel-go's checker does it (checker/types.go: type parameters unified with
// dyn and with each other, `_==_(A, A)` for every type, qualified identifiers), judged by the
// values of cel-go's and Kubernetes' own tests and of the CEL conformance tests (cel-spec
// tests/simple/testdata/optionals.textproto).
import t from 'tap';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';

const env = environmentWith(VALIDATION_VARIABLES);

function problem(source: string, environment = env): string | undefined {
  const compiled = compileExpression(environment, source, 'any');
  return compiled.ok ? undefined : compiled.problem;
}

function run(source: string): unknown {
  const compiled = compileExpression(env, source, 'any');
  if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
  return compiled.expression.evaluate({ object: {}, variables: {} }, new EvaluationBudget());
}

function typeOf(source: string): string | undefined {
  const checked = env.parse(source).check();
  return checked.valid ? checked.type : undefined;
}

t.test('an optional compares with optional.none() and with an optional of another parameter type (cel-go: _==_(A, A))', async (t) => {
  // cel-spec optionals.textproto: optional_eq_none_none ... optional_ne_int_int.
  const conformance: [string, boolean][] = [
    ['optional.none() == optional.none()', true],
    ['optional.none() == optional.of(1)', false],
    ['optional.of(1) == optional.none()', false],
    ['optional.of(1) == optional.of(1)', true],
    ['optional.none() != optional.none()', false],
    ['optional.none() != optional.of(1)', true],
    ['optional.of(1) != optional.none()', true],
    ['optional.of(1) != optional.of(1)', false],
  ];
  for (const [source, expected] of conformance) t.equal(run(source), expected, source);
  // Kubernetes' format_test.go: validate() gives optional<list<string>>, optional.none() an optional of a free parameter.
  t.equal(run('format.dns1123Label().validate("my-label-name") == optional.none()'), true);
  t.equal(run('format.byte().validate("aGVsbG8") == optional.of(["invalid base64"])'), true);
  // A dyn parameter unifies with any: optional<list<string>> against optional<dyn>.
  t.equal(run("optional.of(['a']) == optional.of(dyn(['a']))"), true);
  t.equal(run("optional.of(['a']) == optional.of(dyn(['b']))"), false);
  t.match(problem("optional.of(1) == optional.of('a')"), /no such overload/, 'int and string are no one A');
  // Equality inside lists and through dyn is the same equality.
  t.equal(run('[optional.of(1)] == [optional.of(1)]'), true);
  t.equal(run('[optional.none()] == [optional.of(1)]'), false);
  t.equal(run('dyn(optional.of(1)) == optional.of(1)'), true);
  t.equal(run('sets.contains([optional.of(1)], [optional.of(2)])'), false);
});

t.test('net.IP and net.CIDR are type identifiers from 1.30 (Kubernetes ip_test.go, cidr_test.go); net alone is undeclared', async (t) => {
  t.equal(run('type(ip("192.168.0.1")) == net.IP'), true);
  t.equal(run('type(cidr("192.168.0.0/24")) == net.CIDR'), true);
  t.equal(run('type(cidr("192.168.0.0/24")) == net.IP'), false);
  t.equal(run('net.IP == net.CIDR'), false);
  t.match(problem('net'), /Unknown variable: net/);
  t.match(problem('net.Address'), /Unknown variable: net/, 'only the declared names resolve');
  t.match(problem('net.IP != net.CIDR', environmentWith(VALIDATION_VARIABLES, { major: 1, minor: 29 })), /Unknown variable: net/, 'not before the IP library');
});

t.test("a type parameter bound twice takes the more general type (cel-go checker_test.go: [1] + [dyn('string')] is list(dyn))", async (t) => {
  // cel-js writes list<dyn> as list.
  t.equal(typeOf("[1] + [dyn('string')]"), 'list');
  t.equal(typeOf("[dyn('string')] + [1]"), 'list');
  t.equal(typeOf('[1] + [2]'), 'list<int>');
  t.equal(typeOf('[] + [1,2,3,] + [4]'), 'list<int>');
  t.equal(run("([1] + [dyn('a')])[1] == 'a'"), true, 'so its element compares with a string');
});

t.test('== and != on a type cel-js declares no equality for: accepted when the operands unify, compared with CEL equality', async (t) => {
  // Kubernetes' URL: Equal compares the parsed URLs (cost_test.go compiles url(...) == url(...)).
  t.equal(run("url('https://kubernetes.io/') == url('https://kubernetes.io/')"), true);
  t.equal(run("url('https://kubernetes.io/') != url('http://x.b')"), true);
  t.equal(run("url('https://kubernetes.io/') == dyn(url('https://kubernetes.io/'))"), true, 'dyn unifies with it');
  // null is assignable to an optional (cel-go's isLegacyNullable); Optional.Equal(null) is false.
  t.equal(run('optional.of(1) == null'), false);
  t.match(problem("url('https://kubernetes.io/') == 1"), /no such overload: URL == int/, 'operands that are no one A stay refused');
  t.match(problem("url('https://kubernetes.io/') == optional.none()"), /no such overload/);
  // cel-go checker_test.go: x.single_int64 != null is "found no matching overload for '_!=_' applied to '(int, null)'".
  t.match(problem('1 != null'), /no such overload: int != null/, 'null is assignable to messages and optionals only');
  t.match(problem('[1] == null'), /no such overload/);
});
