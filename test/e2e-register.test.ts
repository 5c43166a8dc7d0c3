import t from 'tap';
import { EVENT_MS } from './support/deadline.js';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { servedBy } from './support/tls/served-certificate.js';

interface StoredWebhook {
  name: string;
  failurePolicy: string;
  timeoutSeconds: number;
  clientConfig: { caBundle: string; service: { name: string; namespace: string; path: string; port: number } };
  namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
}

t.test('registers both configurations with a caBundle that verifies what it serves; admission round trip', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a');
  t.match(replica.child.logs.find((l) => l.msg === 'registered as the leader'), { role: 'leader' });

  const validating = cluster.configuration<{ webhooks: StoredWebhook[]; metadata: { ownerReferences: { kind: string; name: string; uid: string }[]; labels: Record<string, string> } }>('validating')!;
  const mutating = cluster.configuration<{ webhooks: StoredWebhook[] }>('mutating');
  t.ok(validating && mutating, 'both configurations exist');
  const role = cluster.api.store.get('clusterroles', undefined, NAME)!;
  t.match(validating.metadata.ownerReferences, [{ kind: 'ClusterRole', name: NAME, uid: role.metadata!.uid }], 'owned by the ClusterRole');
  t.equal(validating.metadata.labels['app.kubernetes.io/managed-by'], 'kube-admission-server');
  // The bundled policy's enforcing rules share one webhook (grouping auto), its path naming them.
  const hook = validating.webhooks.find((w) => w.name === `validating-fail-t5.${NAME}.${NAMESPACE}.svc`)!;
  t.same(hook.clientConfig.service, { name: NAME, namespace: NAMESPACE, path: '/validate/validating-fail-t5/deny-privileged.deny-host-namespaces', port: 443 });
  t.same(hook.namespaceSelector.matchExpressions.at(-1), { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [NAMESPACE, 'kube-system'] });

  const caBundle = Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8');
  const { served } = await servedBy(replica.port, `${NAME}.${NAMESPACE}.svc`, caBundle);
  t.ok(served.checkHost(`${NAME}.${NAMESPACE}.svc`), 'the served certificate covers <svc>.<ns>.svc and verifies against the registered caBundle');

  const caller = cluster.caller(t, () => replica.port);
  const admitted = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(admitted.allowed, true);
  if (admitted.allowed) t.equal(admitted.object?.metadata?.labels?.['kube-admission-server/defaulted'], 'true', 'mutated by default-labels');

  const denied = await caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }, { securityContext: { privileged: true } }), kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(denied.allowed, false);
  if (!denied.allowed) {
    t.equal(denied.status.code, 403);
    t.match(denied.status.message, `admission webhook "validating-fail-t5.${NAME}.${NAMESPACE}.svc" denied the request: deny-privileged: `);
  }

  const own = await caller.admit({ operation: 'CREATE', object: { ...podFixture({}, { securityContext: { privileged: true } }), metadata: { name: 'x', namespace: NAMESPACE } }, kind: POD_KIND, resource: POD_RESOURCE });
  t.equal(own.allowed, true, 'the own namespace is never intercepted');

  t.equal((await replica.child.stop()).code, 0);
});

t.test('a configuration deleted or edited by hand is restored; the API failing with 5xx at start is survived', async (t) => {
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'get' }, { status: 503 }, { times: 3 });
  const replica = await cluster.startReplica(t, 'kas-a', [], { TEARDOWN: 'never' });
  // The registration and the live view of the configurations both read it at start; either may
  // meet the 503s, so the double's request log says they were met and the log that they were retried.
  const failedReads = cluster.api.requests.filter((r) => r.verb === 'get' && r.resource === 'validatingwebhookconfigurations' && r.status === 503);
  t.equal(failedReads.length, 3, 'three reads of the configuration were answered 503 at start');
  t.ok(
    replica.child.logs.some((l) => l.msg === 'registration attempt failed; retrying' || l.msg === 'reading the live webhook configurations failed; retrying'),
    'retried after 503s',
  );
  t.ok(cluster.configuration('validating'), 'registered once the API recovered');

  const deletedAt = performance.now();
  cluster.api.store.delete('mutatingwebhookconfigurations', undefined, NAME);
  await cluster.api.waitForRequest((r) => r.verb === 'create' && r.resource === 'mutatingwebhookconfigurations' && r.status === 201 && r.startedAt > deletedAt, { timeoutMs: EVENT_MS });
  t.ok(cluster.configuration('mutating'), 'a deleted configuration is recreated');

  const edited = cluster.configuration<{ webhooks: { failurePolicy: string; clientConfig: { caBundle: string } }[] }>('validating')!;
  const original = structuredClone(edited.webhooks);
  edited.webhooks[0]!.failurePolicy = 'Ignore';
  edited.webhooks[0]!.clientConfig.caBundle = Buffer.from('garbage').toString('base64');
  const editedAt = performance.now();
  cluster.api.store.update('validatingwebhookconfigurations', edited as never);
  await cluster.api.waitForRequest((r) => r.verb === 'update' && r.resource === 'validatingwebhookconfigurations' && r.status === 200 && r.startedAt > editedAt, { timeoutMs: EVENT_MS });
  const restored = cluster.configuration<{ webhooks: unknown[] }>('validating')!;
  t.same(restored.webhooks, original, 'an edited configuration (failurePolicy, caBundle) is restored');

  t.equal((await replica.child.stop()).code, 0);
  t.ok(cluster.configuration('validating'), '--teardown never keeps the configurations');
});
