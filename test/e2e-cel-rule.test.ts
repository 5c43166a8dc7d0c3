// The compiled server serving a cel rule, registered with matchConditions, called by the double
// (which decides the matchConditions with CEL) as kube-apiserver would. The rule is the only
// member of its group, so the group's registration carries its matchConditions (every member
// shares them): kube-apiserver decides them and makes no call for an exempt Pod.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { ClusterHarness, NAME, NAMESPACE, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: memory-limits
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    matchConditions:
      - name: not-exempt
        expression: "!has(object.metadata.labels) || !('memory-exempt' in object.metadata.labels)"
    params: { maxMemory: 1Gi }
    validations:
      - expression: "object.spec.containers.all(c, has(c.resources) && has(c.resources.limits) && 'memory' in c.resources.limits)"
        message: every container needs a memory limit
        reason: Forbidden
      - expression: "object.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) || !quantity(c.resources.limits.memory).isGreaterThan(quantity(params.maxMemory)))"
        messageExpression: "'memory limits may not exceed ' + params.maxMemory"
        reason: Forbidden
`;

t.test('a cel rule decides on the review path; its matchConditions are registered and decided by the caller', async (t) => {
  const dir = await tempDir(t, 'kas-e2e-cel-');
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, POLICY);
  const cluster = await ClusterHarness.start(t);
  cluster.seedDeployment(['kas-a']);
  const replica = await cluster.startReplica(t, 'kas-a', ['--policy-file', policy]);
  const validating = cluster.configuration<{ webhooks: { name: string; matchConditions?: unknown[] }[] }>('validating')!;
  t.match(validating.webhooks.find((w) => w.name === `validating-fail-t5.${NAME}.${NAMESPACE}.svc`), { matchConditions: [{ name: 'not-exempt' }], clientConfig: { service: { path: '/validate/validating-fail-t5/memory-limits' } } });

  const caller = cluster.caller(t, () => replica.port);
  const admit = (labels: Record<string, string>, resources?: unknown) =>
    caller.admit({ operation: 'CREATE', object: podFixture(labels, resources ? { resources } : {}), kind: POD_KIND, resource: POD_RESOURCE });

  t.match(await admit({}, { limits: { memory: '512Mi' } }), { allowed: true });
  t.match(await admit({}, { limits: { memory: '2Gi' } }), {
    allowed: false,
    status: { code: 403, reason: 'Forbidden', message: `admission webhook "validating-fail-t5.${NAME}.${NAMESPACE}.svc" denied the request: memory-limits: memory limits may not exceed 1Gi` },
  });
  t.match(await admit({}), { allowed: false, status: { message: /every container needs a memory limit/ } });
  const before = caller.calls.length;
  t.match(await admit({ 'memory-exempt': 'yes' }), { allowed: true }, 'the matchCondition is false: not called');
  t.equal(caller.calls.length, before, 'no webhook call for the exempt Pod');
});
