// src's webhook selection (for evaluate, test, audit) against the double's (the oracle), on generated input.
import fc from 'fast-check';
import t from 'tap';
import { selectorMatches } from '../src/webhooks/label-selector.js';
import { evaluateMatchConditions } from '../src/cel/match-conditions.js';
import type { AdmissionRequest, LabelSelector, Operation, RuleWithOperations } from '../src/admission/types.js';
import { ruleMatches } from '../src/webhooks/webhook-match.js';
import { decideMatchConditions } from '../local-cluster/admission-caller/match-conditions.js';
import { ruleMatches as doubleRuleMatches } from '../local-cluster/admission-caller/select.js';
import { selectorMatches as doubleSelectorMatches } from '../local-cluster/fake-apiserver/label-selector.js';
import type { AdmitRequest } from '../local-cluster/admission-caller/types.js';

const operation = fc.constantFrom<Operation>('CREATE', 'UPDATE', 'DELETE', 'CONNECT');
const group = fc.constantFrom('', 'apps', 'batch');
const version = fc.constantFrom('v1', 'v1beta1');
const resource = fc.constantFrom('pods', 'deployments', 'namespaces', 'configmaps');
const subresource = fc.constantFrom('', 'status', 'ephemeralcontainers', 'exec');
const wildcardList = <T extends string>(item: fc.Arbitrary<T>) => fc.oneof(fc.constant(['*'] as string[]), fc.uniqueArray(item, { minLength: 1, maxLength: 3 }));

const rule: fc.Arbitrary<RuleWithOperations> = fc.record(
  {
    operations: wildcardList(operation) as fc.Arbitrary<RuleWithOperations['operations']>,
    apiGroups: wildcardList(group),
    apiVersions: wildcardList(version),
    resources: fc.uniqueArray(fc.constantFrom('pods', 'pods/status', 'pods/*', '*', '*/status', '*/*', 'deployments', 'namespaces', 'deployments/scale'), { minLength: 1, maxLength: 3 }),
    scope: fc.constantFrom<'Cluster' | 'Namespaced' | '*'>('Cluster', 'Namespaced', '*'),
  },
  { requiredKeys: ['operations', 'apiGroups', 'apiVersions', 'resources'] },
);

const request = fc.record({ operation, group, version, resource, subresource, namespace: fc.constantFrom('', 'team-a') });

t.test('rules (operations, groups, versions, resources/subresources, scope) decide like the double', async (t) => {
  fc.assert(
    fc.property(rule, request, (r, q) => {
      const gvr = { group: q.group, version: q.version, resource: q.resource };
      const ours = { operation: q.operation, resource: gvr, namespace: q.namespace, ...(q.subresource ? { subResource: q.subresource } : {}) } as AdmissionRequest;
      const theirs = { operation: q.operation, resource: gvr, kind: { group: q.group, version: q.version, kind: 'X' }, ...(q.subresource ? { subResource: q.subresource } : {}) } as AdmitRequest;
      return ruleMatches(r, ours) === doubleRuleMatches(r, theirs, q.namespace);
    }),
    { numRuns: 3000 },
  );
  t.pass('3000 generated rule/request pairs agree');
});

t.test('label selectors decide like the double', async (t) => {
  const key = fc.constantFrom('app', 'tier', 'team');
  const value = fc.constantFrom('a', 'b', '');
  const selector: fc.Arbitrary<LabelSelector> = fc.record(
    {
      matchLabels: fc.dictionary(key, value, { maxKeys: 2 }),
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({ key, operator: fc.constantFrom<'In' | 'NotIn'>('In', 'NotIn'), values: fc.uniqueArray(value, { minLength: 1, maxLength: 2 }) }),
          fc.record({ key, operator: fc.constantFrom<'Exists' | 'DoesNotExist'>('Exists', 'DoesNotExist') }),
        ),
        { maxLength: 3 },
      ),
    },
    { requiredKeys: [] },
  );
  fc.assert(fc.property(selector, fc.dictionary(key, value, { maxKeys: 3 }), (s, labels) => selectorMatches(s, labels) === doubleSelectorMatches(s, labels)), { numRuns: 3000 });
  t.pass('3000 generated selector/label pairs agree');
});

t.test('matchConditions: true, false and errors decide like the double', async (t) => {
  const expressions = [
    "request.namespace == 'team-a'",
    "object.metadata.labels.team == 'a'",
    'has(object.metadata.labels) && size(object.spec.containers) + 0 > 1',
    "request.userInfo.username.startsWith('system:')",
    "oldObject == null || oldObject.metadata.name == object.metadata.name",
    "object.spec.containers.exists(c, c.image.matches('^nginx'))",
  ];
  const object = (labels: Record<string, string> | undefined, images: string[]) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a', ...(labels ? { labels } : {}) },
    spec: { containers: images.map((image, i) => ({ name: `c${i}`, image })) },
  });
  const cases = fc.record({
    conditions: fc.uniqueArray(fc.constantFrom(...expressions), { minLength: 1, maxLength: 3 }),
    labels: fc.option(fc.dictionary(fc.constantFrom('team', 'app'), fc.constantFrom('a', 'b')), { nil: undefined }),
    images: fc.array(fc.constantFrom('nginx', 'busybox'), { minLength: 1, maxLength: 3 }),
    namespace: fc.constantFrom('team-a', 'team-b'),
    username: fc.constantFrom('alice', 'system:node:n1'),
    failurePolicy: fc.constantFrom('Fail', 'Ignore'),
  });
  fc.assert(
    fc.property(cases, (c) => {
      const conditions = c.conditions.map((expression, i) => ({ name: `c${i}`, expression }));
      const pod = object(c.labels, c.images);
      const userInfo = { username: c.username };
      const gvr = { group: '', version: 'v1', resource: 'pods' };
      const ours = evaluateMatchConditions(conditions, {
        uid: 'u',
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: gvr,
        name: 'web',
        namespace: c.namespace,
        operation: 'CREATE',
        userInfo,
        object: pod,
        oldObject: null,
        dryRun: false,
        options: null,
      });
      const theirs = decideMatchConditions({ name: 'w', failurePolicy: c.failurePolicy, matchConditions: conditions }, { operation: 'CREATE', object: pod, kind: { group: '', version: 'v1', kind: 'Pod' }, resource: gvr, userInfo }, pod, { namespace: c.namespace, name: 'web' });
      const oursDecision = 'error' in ours ? (c.failurePolicy === 'Ignore' ? 'skip' : 'reject') : ours.match ? 'call' : 'skip';
      const theirsDecision = typeof theirs === 'string' ? theirs : 'reject';
      return oursDecision === theirsDecision;
    }),
    { numRuns: 500 },
  );
  t.pass('500 generated condition sets agree');
});
