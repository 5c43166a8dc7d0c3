import t from 'tap';
import {
  DEFAULT_EXCLUDED_NAMESPACES,
  excludedNamespaceRequirement,
  isExcludedNamespace,
  NAMESPACE_NAME_LABEL,
} from '../src/webhooks/excluded-namespaces.js';
import { admissionRequest, pod, review, webhooksFrom } from './support/policy/policy-fixtures.js';

t.test('isExcludedNamespace', async (t) => {
  t.ok(isExcludedNamespace('kube-system', DEFAULT_EXCLUDED_NAMESPACES));
  t.notOk(isExcludedNamespace('team-a', DEFAULT_EXCLUDED_NAMESPACES));
  t.notOk(isExcludedNamespace(undefined, DEFAULT_EXCLUDED_NAMESPACES), 'cluster-scoped requests are never excluded');
  t.notOk(isExcludedNamespace('', ['']), 'an empty namespace is cluster scope, not a namespace');
  t.notOk(isExcludedNamespace('kube-system-2', DEFAULT_EXCLUDED_NAMESPACES), 'exact names only');
});

t.test('excludedNamespaceRequirement builds the NotIn requirement on the namespace name label', async (t) => {
  t.equal(NAMESPACE_NAME_LABEL, 'kubernetes.io/metadata.name');
  t.same(excludedNamespaceRequirement(['webhooks', 'kube-system', 'webhooks']), {
    key: 'kubernetes.io/metadata.name',
    operator: 'NotIn',
    values: ['kube-system', 'webhooks'],
  });
});

const body = `webhooks:
  - name: deny-privileged
    kind: denyPrivileged
  - name: default-labels
    kind: defaultLabels
    params: { labels: { team: unknown } }
`;
const privileged = pod({ containers: [{ name: 'app', securityContext: { privileged: true } }] }, {});

t.test('handlers let requests in excluded namespaces through untouched', async (t) => {
  const [validating, mutating] = webhooksFrom(body, { ownNamespace: 'webhooks' });
  for (const namespace of ['kube-system', 'webhooks']) {
    t.same(await review(validating!, admissionRequest(privileged, { namespace })), { allowed: true }, `validating, ${namespace}`);
    t.same(await review(mutating!, admissionRequest(privileged, { namespace })), { allowed: true }, `mutating, ${namespace}`);
  }
  t.match(await review(validating!, admissionRequest(privileged, { namespace: 'team-a' })), { allowed: false });
  t.match(await review(mutating!, admissionRequest(privileged, { namespace: 'team-a' })), { allowed: true, object: { metadata: { labels: { team: 'unknown' } } } });
});

t.test('the policy file replaces the default list', async (t) => {
  const [validating] = webhooksFrom(`excludedNamespaces: [sandbox]\n${body}`);
  t.same(await review(validating!, admissionRequest(privileged, { namespace: 'sandbox' })), { allowed: true });
  t.match(await review(validating!, admissionRequest(privileged, { namespace: 'kube-system' })), { allowed: false }, 'kube-system is no longer excluded');
});
