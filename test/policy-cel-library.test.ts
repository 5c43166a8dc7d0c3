// The Kubernetes CEL library functions the server adds, and what the base library brings.
import t from 'tap';
import { EvaluationBudget } from '../src/cel/budget.js';
import { compileExpression } from '../src/cel/compile.js';
import { environmentWith, VALIDATION_VARIABLES } from '../src/cel/environment.js';
import { toCel } from '../src/cel/values.js';
import { compileMatchCondition, evaluateMatchConditions } from '../src/cel/match-conditions.js';

const env = environmentWith(VALIDATION_VARIABLES);

function run(source: string, object: unknown = {}): unknown {
  const compiled = compileExpression(env, source, 'any');
  if (!compiled.ok) throw new Error(`${source}: ${compiled.problem}`);
  return compiled.expression.evaluate({ object: toCel(object), variables: {} }, new EvaluationBudget());
}

t.test('each supported function gives what Kubernetes documents', async (t) => {
  const cases: [string, unknown][] = [
    // Kubernetes quantity library
    ["quantity('1Gi').isGreaterThan(quantity('512Mi'))", true],
    ["quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('2').compareTo(quantity('2000m'))", 0n],
    ["quantity('1.5').isInteger()", false],
    ["quantity('3k').asInteger()", 3000n],
    ["quantity('100Mi').add(quantity('28Mi')).isGreaterThan(quantity('127Mi'))", true],
    ["quantity('1').sub(2).sign()", -1n],
    ["isQuantity('12Mi') && !isQuantity('twelve')", true],
    // url library
    ["url('https://example.com:8443/a/b?x=1&x=2').getHost()", 'example.com:8443'],
    ["url('https://example.com:8443/a').getHostname()", 'example.com'],
    ["url('https://example.com:8443/a').getPort()", '8443'],
    ["url('https://example.com/a%20b').getEscapedPath()", '/a%20b'],
    ["url('https://example.com/?x=1&x=2').getQuery()['x']", ['1', '2']],
    ["url('https://example.com').getScheme()", 'https'],
    ["isURL('https://example.com') && !isURL('not a url')", true],
    // ip and cidr libraries
    ["ip('10.0.0.1').family()", 4n],
    ["ip('::1').isLoopback()", true],
    ["cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", true],
    ["cidr('10.0.0.0/8').containsIP('192.168.0.1')", false],
    ["cidr('192.168.0.0/16').prefixLength()", 16n],
    ["isIP('1.2.3.4') && !isIP('1.2.3') && isCIDR('::/0')", true],
    // lists library
    ['[1, 2, 3].isSorted() && ![2, 1].isSorted()', true],
    ['[1, 2, 3].sum()', 6n],
    ["['b', 'a', 'c'].min()", 'a'],
    ['[1, 5, 3].max()', 5n],
    ["['a', 'b', 'a'].indexOf('a') == 0 && ['a', 'b', 'a'].lastIndexOf('a') == 2", true],
    // regex library
    ["'abc 123 def 456'.find('[0-9]+')", '123'],
    ["'abc 123 def 456'.findAll('[0-9]+')", ['123', '456']],
    ["'a1b2c3'.findAll('[0-9]', 2)", ['1', '2']],
    // strings extensions (base library and added)
    ["'Hello'.lowerAscii() + 'x'.upperAscii()", 'helloX'],
    ["'a,b'.split(',')", ['a', 'b']],
    ["'a-b-c'.replace('-', '_')", 'a_b_c'],
    ["'a-b-c'.replace('-', '_', 1)", 'a_b-c'],
    ["'héllo'.charAt(1)", 'é'],
    ["' x '.trim()", 'x'],
    ["['a', 'b'].join('/')", 'a/b'],
    // core CEL the rules lean on
    ["object.?metadata.?labels[?'app'].orValue('none')", 'none'],
    ["cel.bind(n, 2, n * n)", 4n],
    ["object.spec.replicas + 1", 4n],
    ["timestamp('2026-01-01T00:00:00Z') > timestamp('2025-01-01T00:00:00Z')", true],
    ["duration('90s') > duration('1m')", true],
  ];
  for (const [source, expected] of cases) t.same(run(source, { spec: { replicas: 3 } }), expected, source);
});

t.test('functions fail as errors (the rule then follows its failurePolicy), not as wrong answers', async (t) => {
  for (const source of ["quantity('lots')", "url('::')", "ip('300.1.1.1')", "cidr('10.0.0.0/40')", '[].max()']) {
    t.throws(() => run(source), { name: 'CelEvaluationError' }, source);
  }
});

t.test('what Kubernetes does not have is refused when the policy loads', async (t) => {
  // a GroupCheck has no check(); strings reverse() is ext.Strings v3, which Kubernetes does not enable.
  for (const source of ["authorizer.group('apps').check('create')", "'abc'.reverse()", "nosuch('x')"]) {
    const compiled = compileExpression(env, source, 'any');
    t.notOk(compiled.ok, source);
  }
});

t.test('matchConditions that ask the authorizer compile (kube-apiserver accepts them); deciding them without answers is an error naming the check', async (t) => {
  const expression = "authorizer.group('apps').resource('deployments').namespace('a').check('create').allowed()";
  t.type(compileMatchCondition(expression), 'object', 'compiles');
  t.type(compileMatchCondition('authorizer.requestResource.check("create").allowed()'), 'object', 'requestResource compiles');
  t.match(compileMatchCondition("authorizer.nosuch('x')"), /does not compile/);
  const request = { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, operation: 'CREATE' as const, userInfo: {}, object: {}, oldObject: null, dryRun: false, options: null };
  t.match(evaluateMatchConditions([{ name: 'authz', expression }], request), { condition: 'authz', error: /nobody to ask whether \(no user\) may create apps\/deployments in namespace a/ });
});
