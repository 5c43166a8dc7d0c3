/**
 * The double matches subresources the way kube-apiserver's rule matcher does (local-cluster/CONTRACT.md 3.7 and
 * 4.1): a rule entry is `resource[/subresource]`, `*` stands for one side, and an entry without
 * a `/` matches the resource itself only, never its subresources.
 */
import t from 'tap';
import { ruleMatches } from '../local-cluster/admission-caller/select.js';
import type { AdmitRequest } from '../local-cluster/admission-caller/types.js';

const POD = { group: '', version: 'v1', resource: 'pods' };
const request = (subResource?: string): AdmitRequest => ({
  operation: 'UPDATE',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: POD,
  ...(subResource ? { subResource } : {}),
});
const rule = (resources: string[], operations = ['UPDATE']) => ({ operations, apiGroups: [''], apiVersions: ['v1'], resources, scope: '*' });

const cases: [string[], string | undefined, boolean][] = [
  [['pods/ephemeralcontainers'], 'ephemeralcontainers', true],
  [['pods/*'], 'ephemeralcontainers', true],
  [['*/ephemeralcontainers'], 'ephemeralcontainers', true],
  [['*/*'], 'ephemeralcontainers', true],
  [['pods'], 'ephemeralcontainers', false],
  [['*'], 'ephemeralcontainers', false],
  [['pods/status'], 'ephemeralcontainers', false],
  [['deployments/ephemeralcontainers'], 'ephemeralcontainers', false],
  [['pods', 'pods/ephemeralcontainers'], 'ephemeralcontainers', true],
  [['pods/ephemeralcontainers'], undefined, false],
  [['pods/*'], undefined, true],
  [['*/*'], undefined, true],
  [['pods'], undefined, true],
];

for (const [resources, subResource, expected] of cases) {
  t.test(`${JSON.stringify(resources)} ${expected ? 'matches' : 'does not match'} pods${subResource ? `/${subResource}` : ''}`, async (t) => {
    t.equal(ruleMatches(rule(resources), request(subResource), 'team-a'), expected);
  });
}

t.test('the operation still has to match on a subresource', async (t) => {
  t.equal(ruleMatches(rule(['pods/ephemeralcontainers'], ['CREATE']), request('ephemeralcontainers'), 'team-a'), false);
  t.equal(ruleMatches(rule(['pods/ephemeralcontainers'], ['*']), request('ephemeralcontainers'), 'team-a'), true);
});
