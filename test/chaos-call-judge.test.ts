// The chaos engine's I2 oracle on calls to grouped webhooks: a group's path names its members, and
// each member is judged by its own rule (an enforcing one that allowed what it refuses, a "not
// served" on a Fail webhook), as an entry's own webhook is. Judged from the URL the caller used,
// never from src/.
import t from 'tap';
import type { CallRecord } from '../local-cluster/admission-caller/types.js';
import { CallJudge, entriesCalled } from './support/chaos/explore/invariants/calls.js';
import { Ledger } from './support/chaos/explore/invariants/ledger.js';
import { PolicyHistory } from './support/chaos/explore/policy-history.js';

const GROUP_URL = 'https://kube-admission-server.kube-admission-server.svc:443/validate/validating-fail-t5/deny-privileged.deny-host-namespaces?timeout=5s';

function call(fields: Partial<CallRecord>): CallRecord {
  return {
    apiserver: 'kube-apiserver-0',
    configuration: 'kube-admission-server',
    webhook: 'validating-fail-t5.kube-admission-server.kube-admission-server.svc',
    phase: 'validating',
    round: 0,
    url: GROUP_URL,
    startedAt: performance.now(),
    endedAt: performance.now(),
    outcome: 'allowed',
    failurePolicy: 'Fail',
    namespace: 'chaos',
    name: 'chaos-1-compliant',
    warnings: [],
    ...fields,
  };
}

function judge(): { judge: CallJudge; ledger: Ledger } {
  const ledger = new Ledger(() => 0, () => {});
  return { judge: new CallJudge(new PolicyHistory(), ledger, (at) => at), ledger };
}

t.test('the entries of a call come from its path: a group names its members, an entry itself', async (t) => {
  t.same(entriesCalled(call({})), ['deny-privileged', 'deny-host-namespaces']);
  t.same(entriesCalled(call({ url: 'https://svc:443/validate/validating-fail-t5/a.b/c.d?timeout=5s' })), ['a', 'b', 'c', 'd'], 'past 253 characters the members go on in another segment');
  t.same(entriesCalled(call({ url: 'https://svc:443/validate/deny-privileged?timeout=5s', webhook: 'deny-privileged.x.y.svc' })), ['deny-privileged']);
});

t.test('a Fail group that allowed a privileged Pod: I2, naming the member whose rule refuses it', async (t) => {
  const { judge: j, ledger } = judge();
  j.record(call({ name: 'chaos-2-privileged' }));
  t.equal(ledger.counts.I2, 1);
  j.record(call({ name: 'chaos-3-compliant' }));
  t.equal(ledger.counts.I2, 1, 'a compliant Pod allowed is no violation');
});

t.test('"not served" for a member of a Fail group is I2; on an Ignore group it is counted apart', async (t) => {
  const { judge: j, ledger } = judge();
  const warning = 'this replica does not serve "deny-host-namespaces" (yet or any more); allowed';
  j.record(call({ warnings: [warning] }));
  t.equal(ledger.counts.I2, 1);
  j.record(call({ warnings: [warning], failurePolicy: 'Ignore', url: GROUP_URL.replace('validating-fail-t5', 'validating-ignore-t5') }));
  t.equal(ledger.counts.I2, 1);
  t.equal(j.counts.notServedOnIgnore, 1);
  // The member not served is not held to its rule (it did not run); the one that ran is.
  j.record(call({ name: 'chaos-4-host', warnings: [warning] }));
  t.equal(ledger.counts.I2, 2, 'only the "not served" counts: the host Pod was for the member that was not run');
});
