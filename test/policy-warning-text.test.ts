// Warnings as kube-apiserver keeps them: what it would drop without a word (control characters,
// invalid UTF-8, empty) is cleaned before it leaves the server, and warnings are cut only where
// it cuts. The recorder cases are k8s.io/apiserver pkg/endpoints/filters/warning_test.go's
// (TestAddWarning, TestTruncation), with the same limits.
import t from 'tap';
import { parsePolicy } from '../src/policy/policy-file.js';
import { cleanWarningText, recordWarnings } from '../src/admission/warning-text.js';
import { runReview } from '../src/server/review/run-handler.js';
import { simulate } from '../src/tools/evaluation.js';
import type { ValidatingWebhook } from '../src/admission/types.js';
import { admissionRequest, pod, webhookFrom } from './support/policy/policy-fixtures.js';

t.test('kube-apiserver\'s recorder: empty, repeated and control-character texts dropped', async (t) => {
  t.same(recordWarnings([]), []);
  t.same(recordWarnings(['']), []);
  t.same(recordWarnings(['mytext', 'mytext']), ['mytext']);
  t.same(recordWarnings(['mytext1', 'mytext2', 'mytext3']), ['mytext1', 'mytext2', 'mytext3']);
  t.same(recordWarnings(['my\ntext']), []);
  t.same(recordWarnings(['half \uD800 a pair']), [], 'invalid UTF-8 once encoded');
});

t.test('kube-apiserver\'s recorder: past the total every warning is cut, and later ones dropped (TestTruncation, limits 25 and 5)', async (t) => {
  const limits = { totalRunes: 25, itemRunes: 5 };
  const first = ['aaaaaaaaaa', 'aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô'];
  t.same(recordWarnings(first, limits), ['aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô'], 'within the total: kept whole');
  t.same(recordWarnings([...first, 'e', 'ffffffffff', 'ffffffffff', 'gggggggggg', 'h'], limits), ['aaaaa', 'bb', 'ccc', 'Iñtër', 'e', 'fffff', 'ggggg']);
});

t.test('what would be dropped is cleaned instead: control characters become a space, unpaired halves U+FFFD', async (t) => {
  t.equal(cleanWarningText('line one\n  line two\tand\u0007three '), 'line one line two and three');
  t.equal(cleanWarningText('half \uD800 pair'), 'half \uFFFD pair');
  t.equal(cleanWarningText('\n\t'), '');
});

const WARN_RULE = `webhooks:
  - name: no-latest
    kind: cel
    mode: warn
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
        messageExpression: "'pin the image of ' + object.spec.containers.filter(c, c.image.endsWith(':latest')).map(c, c.name).join(',\\\\t') + ': ' + params.why"
    params:
      why: "${'a tag that moves makes rollbacks lie. '.repeat(5).trim()}"
`;

t.test('a warn rule\'s warning reaches the user whole and on one line; evaluate shows the same', async (t) => {
  const webhook = webhookFrom(WARN_RULE);
  const request = admissionRequest(pod({ containers: [{ name: 'a', image: 'nginx:latest' }, { name: 'b', image: 'redis:latest' }] }));
  const expected = `no-latest: pin the image of a, b: ${'a tag that moves makes rollbacks lie. '.repeat(5).trim()}`;
  t.ok(expected.length > 120, `${expected.length} characters: not cut at 120`);
  const run = await runReview(webhook, structuredClone(request), 1000);
  t.same(run.verdict.warnings, [expected]);
  const outcome = await simulate([webhook], request, { excludedNamespaces: [] });
  t.same(outcome.webhooks[0]?.warnings, [expected], 'evaluate and test show what the user sees');
});

t.test('a custom handler\'s warnings are cleaned the same way', async (t) => {
  const webhook: ValidatingWebhook = {
    ...webhookFrom(WARN_RULE),
    handler: () => ({ allowed: true, warnings: ['first line\nsecond line', '\t', 'fine'] }),
  } as ValidatingWebhook;
  const run = await runReview(webhook, admissionRequest(pod({ containers: [] })), 1000);
  t.same(run.verdict.warnings, ['first line second line', 'fine']);
});

t.test('a message with a control character is refused at load, with its line; a folded block\'s trailing line break is fine', async (t) => {
  const result = parsePolicy(
    `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: two-lines
    kind: cel
    mode: warn
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "false"
        message: "first line\\nsecond line"
      - expression: "false"
        message: >
          folded into
          one line
`,
    'p.yaml',
  );
  t.same(!result.ok && result.errors, [
    'p.yaml:10:18: webhooks[0].validations[0].message: must be one line without control characters (line breaks, tabs): kube-apiserver drops a warning that holds one without telling anyone; write it on one line (a YAML ">-" block folds lines into one)',
  ]);
});
