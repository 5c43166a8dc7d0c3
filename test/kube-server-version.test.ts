import t from 'tap';
import { checkMatchConditionsSupported, MatchConditionsUnsupportedError } from '../src/kube/match-conditions-gate.js';
import { parseServerVersion } from '../src/kube/server-version.js';
import type { WebhookSpec } from '../src/policy/types.js';

const spec = (name: string, withConditions: boolean): WebhookSpec => ({
  name,
  type: 'validating',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  failurePolicy: 'Fail',
  sideEffects: 'None',
  timeoutSeconds: 5,
  matchPolicy: 'Equivalent',
  ...(withConditions ? { matchConditions: [{ name: 'c', expression: 'true' }] } : {}),
});

t.test('versions as kube-apiserver and managed offerings report them', async (t) => {
  t.same(parseServerVersion({ major: '1', minor: '27+', gitVersion: 'v1.27.16-eks-2f008fe' }), { major: 1, minor: 27, gitVersion: 'v1.27.16-eks-2f008fe' });
  t.same(parseServerVersion({ major: '1', minor: '35' }), { major: 1, minor: 35, gitVersion: 'v1.35' });
  t.equal(parseServerVersion({ major: '', minor: '' }), undefined);
});

t.test('matchConditions are refused below 1.28 only, naming every webhook that uses them', async (t) => {
  const webhooks = [spec('a', true), spec('b', false), spec('c', true)];
  const old = parseServerVersion({ major: '1', minor: '27', gitVersion: 'v1.27.3' });
  t.throws(() => checkMatchConditionsSupported(webhooks, old), new MatchConditionsUnsupportedError(old!, ['validating a', 'validating c']));
  t.throws(() => checkMatchConditionsSupported(webhooks, old), { message: /^kube-apiserver v1\.27\.3 drops matchConditions .* webhooks validating a, validating c would match more/ });
  t.doesNotThrow(() => checkMatchConditionsSupported([spec('b', false)], old), 'nothing to drop');
  t.doesNotThrow(() => checkMatchConditionsSupported(webhooks, parseServerVersion({ major: '1', minor: '28' })));
  t.doesNotThrow(() => checkMatchConditionsSupported(webhooks, parseServerVersion({ major: '2', minor: '0' })));
});
