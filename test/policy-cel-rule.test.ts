import t from 'tap';
import { parsePolicy } from '../src/policy/policy-file.js';
import { runReview } from '../src/server/review/run-handler.js';
import { admissionRequest, deployment, pod, review, webhookFrom } from './support/policy/policy-fixtures.js';

const HEADER = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

function errorsOf(body: string): string[] {
  const result = parsePolicy(HEADER + body, 'p.yaml');
  if (result.ok) throw new Error('expected the policy to be rejected');
  return result.errors;
}

const REPLICAS_RULE = `webhooks:
  - name: replica-limit
    kind: cel
    rules:
      - { operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }
    params: { maxReplicas: 3 }
    variables:
      - name: replicas
        expression: "object.spec.?replicas.orValue(1)"
    validations:
      - expression: "variables.replicas <= params.maxReplicas"
        messageExpression: "'replicas must be at most ' + string(params.maxReplicas) + ', got ' + string(variables.replicas)"
        reason: Forbidden
      - expression: "object.metadata.name.matches('^[a-z]+$')"
        message: name must be lowercase letters
`;

t.test('a cel rule decides like a ValidatingAdmissionPolicy: variables, params, messageExpression, reason', async (t) => {
  const webhook = webhookFrom(REPLICAS_RULE);
  t.match(webhook, { name: 'replica-limit', type: 'validating', failurePolicy: 'Fail' });
  const small = deployment({ containers: [{ name: 'c', image: 'nginx' }] });
  t.same(await review(webhook, admissionRequest(small)), { allowed: true }, 'two replicas pass');
  const big = { ...small, metadata: { name: 'Web-1', namespace: 'team-a' }, spec: { ...(small['spec'] as object), replicas: 5 } };
  t.same(await review(webhook, admissionRequest(big)), {
    allowed: false,
    code: 403,
    reason: 'Forbidden',
    message: 'replicas must be at most 3, got 5; name must be lowercase letters',
  });
});

t.test('integers are ints, as in Kubernetes: arithmetic with int literals works', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: ports
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.spec.containers.all(c, !has(c.ports) || c.ports.all(p, p.containerPort + 0 >= 1024))"
        message: ports below 1024 need root
`);
  const low = pod({ containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] });
  const high = pod({ containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 8080 }] }] });
  t.same(await review(webhook, admissionRequest(high)), { allowed: true });
  t.match(await review(webhook, admissionRequest(low)), { allowed: false, code: 422, reason: 'Invalid', message: 'ports below 1024 need root' });
});

t.test('oldObject, request and DELETE: the rule sees the whole request', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: keep-owner
    kind: cel
    rules: [{ operations: [UPDATE, DELETE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "request.operation != 'DELETE' || request.userInfo.username == 'admin'"
        message: only admin deletes
      - expression: "oldObject == null || object == null || object.metadata.labels.owner == oldObject.metadata.labels.owner"
        message: the owner label is immutable
`);
  const before = pod({ containers: [] }, { owner: 'a' });
  const after = pod({ containers: [] }, { owner: 'b' });
  t.match(await review(webhook, admissionRequest(after, { operation: 'UPDATE', oldObject: before })), { allowed: false, message: 'the owner label is immutable' });
  t.match(await review(webhook, admissionRequest(null, { operation: 'DELETE', oldObject: before })), { allowed: false, message: 'only admin deletes' });
});

t.test('modes: warn and audit allow and report; excluded namespaces pass untouched', async (t) => {
  const body = (mode: string) => `webhooks:
  - name: no-latest
    kind: cel
    mode: ${mode}
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
        message: pin your images
`;
  const latest = pod({ containers: [{ name: 'c', image: 'nginx:latest' }] });
  t.same(await review(webhookFrom(body('warn')), admissionRequest(latest)), { allowed: true, warnings: ['no-latest: pin your images'] });
  t.same(await review(webhookFrom(body('audit')), admissionRequest(latest)), {
    allowed: true,
    auditAnnotations: {
      'policy-violation': 'pin your images',
      validation_failure: JSON.stringify([{ message: 'pin your images', policy: 'no-latest', binding: 'no-latest', expressionIndex: 0, validationActions: ['Audit'] }]),
    },
  });
  t.same(await review(webhookFrom(body('enforce')), admissionRequest(latest, { namespace: 'kube-system' })), { allowed: true });
});

t.test('an expression that errors at evaluation follows the failurePolicy, as in kube-apiserver', async (t) => {
  const body = (policy: string) => `webhooks:
  - name: needs-team
    kind: cel
    failurePolicy: ${policy}
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "object.metadata.labels.team != ''"
`;
  const unlabelled = pod({ containers: [] }, {});
  const fail = await runReview(webhookFrom(body('Fail')), admissionRequest(unlabelled), 1000);
  t.match(fail.verdict, { allowed: false, status: { code: 422, reason: 'Invalid', message: /^expression 'object.metadata.labels.team != ''' resulted in error: .*team/ } });
  const ignore = await runReview(webhookFrom(body('Ignore')), admissionRequest(unlabelled), 1000);
  t.match(ignore.verdict, { allowed: true, auditAnnotations: { 'failed-open': /resulted in error/ } });
});

t.test('namespaceObject reaches the rule when the caller has it; unknown, the failurePolicy answers', async (t) => {
  const webhook = webhookFrom(`webhooks:
  - name: ns-tier
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "namespaceObject == null || namespaceObject.metadata.labels.tier == 'prod'"
        message: only prod namespaces
`);
  const request = admissionRequest(pod({ containers: [] }));
  const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { tier: 'dev' } } };
  t.match((await runReview(webhook, request, 1000, undefined, namespace)).verdict, { allowed: false, status: { message: 'only prod namespaces' } });
  t.match((await runReview(webhook, request, 1000, undefined, null)).verdict, { allowed: true }, 'null: the request has no namespace object');
  const unknown = await runReview(webhook, request, 1000);
  t.match(unknown.verdict, { allowed: false, status: { code: 500 } }, 'unknown (the server cache lacks it): failurePolicy Fail');
  t.match(unknown.failure, /namespace "team-a" is not in this server's Namespace cache/);
});

t.test('uncompilable expressions are refused at load with path, line and the problem', async (t) => {
  const errors = errorsOf(`webhooks:
  - name: broken
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    variables:
      - name: x
        expression: "object.metadata.name +"
    validations:
      - expression: "object.spec.containers.all(c, c.image.nosuchfn())"
      - expression: "size(object.spec.containers)"
      - expression: "variables.y == 1"
      - expression: "true"
        messageExpression: "1 + 1"
        reason: Teapot
`);
  t.same(errors, [
    'p.yaml:9:21: webhooks[0].variables[0].expression: CEL expression does not parse: Unexpected token: EOF (at column 23)',
    "p.yaml:11:21: webhooks[0].validations[0].expression: CEL expression does not compile: found no matching overload for 'dyn.nosuchfn()' (at column 31)",
    'p.yaml:12:21: webhooks[0].validations[1].expression: CEL expression must evaluate to a bool, this one gives int',
    'p.yaml:13:21: webhooks[0].validations[2].expression: CEL expression reads variables.y, which is not defined before it (defined before it: x)',
    'p.yaml:15:28: webhooks[0].validations[3].messageExpression: CEL expression must evaluate to a string, this one gives int',
    'p.yaml:16:17: webhooks[0].validations[3].reason: must be one of Unauthorized, Forbidden, Invalid, RequestEntityTooLarge, got "Teapot"',
  ]);
});

t.test('cel entries need rules and validations; other kinds refuse cel fields', async (t) => {
  t.same(
    errorsOf(`webhooks:
  - name: bare
    kind: cel
  - name: mixed
    kind: denyPrivileged
    validations: [{ expression: "true" }]
`),
    [
      'p.yaml:4:5: webhooks[0]: missing required field "rules" (a list of { operations, apiGroups, apiVersions, resources })',
      'p.yaml:4:5: webhooks[0]: missing required field "validations" (a list of { expression, message, messageExpression, reason })',
      'p.yaml:8:18: webhooks[1].validations: only entries of kind cel take "validations"; this one is denyPrivileged',
    ],
  );
});
