/**
 * A policy edit that lands while the pod is starting (after the file was parsed, before TLS,
 * listen and self-check are done) is a change like any other: the watcher's baseline is the
 * bytes that were parsed, not whatever the file holds once the watcher starts.
 */
import { join } from 'node:path';
import t from 'tap';
import { AtomicWriter } from '../local-cluster/util/atomic-writer.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { DENY_PRIVILEGED_ENTRY, policyText, requireLabelEntry } from './support/policy/policy-text.js';

const V1 = policyText(DENY_PRIVILEGED_ENTRY);
const V2 = policyText(DENY_PRIVILEGED_ENTRY + requireLabelEntry('require-team', 'team'));

t.test('a policy edit made while the server starts is applied, not mistaken for the baseline', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const volume = new AtomicWriter(join(cluster.dir, 'policy-volume'));
  await volume.write({ 'policy.yaml': V1 });
  // The policy is parsed first thing; the generated material's Secret is read next. Holding that
  // read open gives the edit a moment that is surely after the parse and before the rest of startup.
  cluster.api.faults.add({ resource: 'secrets', verb: 'get', namespace: NAMESPACE }, { latencyMs: 1500 }, { times: 1 });
  const spawned = cluster.spawnReplica(t, 'kas-a', ['--policy-file', join(cluster.dir, 'policy-volume', 'policy.yaml')], { WATCH_POLL_INTERVAL: '500ms' });
  const isSecretRead = (r: { verb?: string; resource?: string }): boolean => r.verb === 'get' && r.resource === 'secrets';
  await cluster.api.waitForRequest(isSecretRead, { phase: 'started', timeoutMs: STARTUP_MS });
  await volume.write({ 'policy.yaml': V2 });
  const secretRead = cluster.api.requests.find(isSecretRead);
  t.match(secretRead, { fault: { latencyMs: 1500 }, endedAt: undefined }, 'the edit landed while the startup was still in its delayed Secret read');
  const replica = await ClusterHarness.ready(spawned);

  await replica.child.waitForMessage('policy reloaded', EVENT_MS);
  const edited = '/validate/validating-fail-t5/deny-privileged.require-team';
  await cluster.api.store.waitFor('validatingwebhookconfigurations', undefined, NAME, () => cluster.registeredValidatingPaths().includes(edited), { timeoutMs: EVENT_MS });
  t.same(cluster.registeredValidatingPaths(), [edited], 'the edited policy is registered (the group now names require-team)');
  const caller = cluster.caller(t, () => replica.port);
  const denied = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(denied.allowed, false, 'and enforced');
  if (!denied.allowed) t.match(denied.status.message, /require-team.*missing label "team"/);
  t.equal((await replica.child.stop()).code, 0);
});
