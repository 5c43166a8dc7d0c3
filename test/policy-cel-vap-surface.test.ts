// The rest of a ValidatingAdmissionPolicy's surface on a cel entry: auditAnnotations
// (validator.go's rules for their values), validationActions as a set in place of mode, and
// failed validations under Audit recorded as kube-apiserver records them
// (`validation.policy.admission.k8s.io/validation_failure`'s value shape, dispatcher.go).
import t from 'tap';
import { parsePolicy } from '../src/policy/policy-file.js';
import { runReview } from '../src/server/review/run-handler.js';
import { admissionRequest, pod, webhookFrom } from './support/policy/policy-fixtures.js';

const HEAD = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

function entry(extra: string): string {
  return `webhooks:
  - name: team-rule
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
${extra}    validations:
      - expression: "has(object.metadata.labels.team)"
        message: every Pod needs a team label
        reason: Forbidden
`;
}

const unlabelled = () => admissionRequest(pod({ containers: [{ name: 'c', image: 'nginx:1' }] }, { app: 'web' }));

t.test('auditAnnotations: a string is recorded trimmed, "" and null are left out', async (t) => {
  const webhook = webhookFrom(
    entry(`    auditAnnotations:
      - key: image-count
        valueExpression: "'  ' + string(size(object.spec.containers)) + ' '"
      - key: empty
        valueExpression: "''"
      - key: none
        valueExpression: "dyn(null)"
`),
  );
  const run = await runReview(webhook, admissionRequest(pod({ containers: [{ name: 'c', image: 'nginx:1' }] }, { team: 'a' })), 1000);
  t.same(run.verdict, { decision: 'allowed', allowed: true, patch: undefined, auditAnnotations: { 'image-count': '1' } });
});

t.test('an auditAnnotation of the wrong type is an error: failurePolicy Fail denies with kube-apiserver\'s words, Ignore leaves it out', async (t) => {
  const body = (failurePolicy: string) =>
    entry(`    failurePolicy: ${failurePolicy}
    auditAnnotations:
      - key: replicas
        valueExpression: "size(object.spec.containers)"
`);
  const labelled = admissionRequest(pod({ containers: [] }, { team: 'a' }));
  t.match((await runReview(webhookFrom(body('Fail')), labelled, 1000)).verdict, {
    allowed: false,
    status: { message: "valueExpression 'size(object.spec.containers)' resulted in unsupported return type: int. Return type must be either string or null." },
  });
  t.match((await runReview(webhookFrom(body('Ignore')), labelled, 1000)).verdict, { allowed: true, auditAnnotations: { 'failed-open': /unsupported return type/ } });
});

t.test('validationActions [Deny, Audit]: denied, and the failure recorded under validation_failure as kube-apiserver does', async (t) => {
  const run = await runReview(webhookFrom(entry('    validationActions: [Deny, Audit]\n')), unlabelled(), 1000);
  t.match(run.verdict, { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'every Pod needs a team label' } });
  t.same(JSON.parse(run.verdict.auditAnnotations?.['validation_failure'] ?? 'null'), [
    { message: 'every Pod needs a team label', policy: 'team-rule', binding: 'team-rule', expressionIndex: 0, validationActions: ['Deny', 'Audit'] },
  ]);
  t.equal(run.verdict.auditAnnotations?.['policy-violation'], 'every Pod needs a team label');
});

t.test('validationActions [Audit] with two failed validations: validation_failure holds the first, as kube-apiserver keeps it', async (t) => {
  // dispatcher.go publishes each failure as a one-entry list under the same key, and AddAnnotation
  // keeps a key's first value: the audit event names the first failed validation only.
  const webhook = webhookFrom(
    entry('    validationActions: [Audit]\n').replace(
      '        reason: Forbidden\n',
      '        reason: Forbidden\n      - expression: "has(object.metadata.labels.owner)"\n        message: every Pod needs an owner label\n',
    ),
  );
  const run = await runReview(webhook, unlabelled(), 1000);
  t.equal(run.verdict.allowed, true);
  t.same(JSON.parse(run.verdict.auditAnnotations?.['validation_failure'] ?? 'null'), [
    { message: 'every Pod needs a team label', policy: 'team-rule', binding: 'team-rule', expressionIndex: 0, validationActions: ['Audit'] },
  ]);
  t.equal(run.verdict.auditAnnotations?.['policy-violation'], 'every Pod needs a team label; every Pod needs an owner label', "the rule's own annotation still names both");
});

t.test('validationActions [Warn, Audit]: allowed with a warning and the record; without Deny the default failurePolicy is Ignore', async (t) => {
  const webhook = webhookFrom(entry('    validationActions: [Warn, Audit]\n'));
  t.equal(webhook.failurePolicy, 'Ignore');
  const run = await runReview(webhook, unlabelled(), 1000);
  t.match(run.verdict, { allowed: true, warnings: ['team-rule: every Pod needs a team label'], auditAnnotations: { validation_failure: /"validationActions":\["Warn","Audit"\]/ } });
});

t.test('validationActions are checked at load: Deny with Warn, unknown actions, and mode beside them are refused', async (t) => {
  const result = parsePolicy(
    HEAD +
      `webhooks:
  - name: both
    kind: cel
    mode: warn
    validationActions: [Deny, Warn]
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations: [{ expression: "true" }]
  - name: other
    kind: denyPrivileged
    validationActions: [Audit]
`,
    'p.yaml',
  );
  t.same(!result.ok && result.errors, [
    'p.yaml:7:24: webhooks[0].validationActions: must not hold both Deny and Warn (kube-apiserver refuses that binding; Deny already shows the message)',
    'p.yaml:7:24: webhooks[0].validationActions: replaces mode: set one of them, not both',
    'p.yaml:12:24: webhooks[1].validationActions: only entries of kind cel take "validationActions"; this one is denyPrivileged',
  ]);
});

t.test('resourceNames and excludeResourceRules: what they leave out is let through untouched, as kube-apiserver\'s matching', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: config-rule
    kind: cel
    rules: [{ operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps, secrets] }]
    resourceNames: [app-config, app-secret, generated]
    excludeResourceRules:
      - { operations: ["*"], apiGroups: [""], apiVersions: [v1], resources: [secrets], resourceNames: [app-secret] }
    validations:
      - expression: "false"
        message: judged
        reason: Forbidden
`);
  const object = (kind: string, name: string | undefined) => ({ apiVersion: 'v1', kind, metadata: { ...(name ? { name } : { generateName: 'gen-' }), namespace: 'team-a' } });
  const judged = async (kind: string, name: string | undefined) => {
    const request = admissionRequest(object(kind, name));
    request.resource = { group: '', version: 'v1', resource: kind === 'Secret' ? 'secrets' : 'configmaps' };
    request.kind = { group: '', version: 'v1', kind };
    if (name === undefined) delete request.name;
    else request.name = name;
    return (await runReview(webhook, request, 1000)).verdict.allowed === false;
  };
  t.equal(await judged('ConfigMap', 'app-config'), true, 'a named object is judged');
  t.equal(await judged('ConfigMap', 'other'), false, 'another name is let through');
  t.equal(await judged('ConfigMap', undefined), false, 'a generated name is not known yet: not matched (matching.go)');
  t.equal(await judged('Secret', 'app-secret'), false, 'excluded by excludeResourceRules');
  const result = parsePolicy(
    HEAD +
      `webhooks:
  - name: x
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    excludeResourceRules: [{ operations: [PATCH], apiGroups: [""], apiVersions: [v1], resources: [pods], colour: red }]
    validations: [{ expression: "true" }]
`,
    'p.yaml',
  );
  t.notOk(result.ok, 'excludeResourceRules are checked as rules are');
});
