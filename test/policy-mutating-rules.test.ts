import fc from 'fast-check';
import t, { type Test } from 'tap';
import { applyPatch, computePatch, copyObject } from '../src/admission/patch.js';
import { parseQuantity } from '../src/admission/quantity.js';
import { applyDefaultResources } from '../src/policy/rules/default-resources.js';
import type { AdmissionRequest, KubeObject, MutationDecision, Webhook } from '../src/admission/types.js';
import { admissionRequest, cronJob, deployment, pod, review, webhookFrom } from './support/policy/policy-fixtures.js';

/** What kube-apiserver ends up storing: the handler's object turned into a JSON patch and applied. */
async function admitted(webhook: Webhook, request: AdmissionRequest): Promise<{ result: KubeObject; patchLength: number; decision: MutationDecision }> {
  // As the server does: the handler may edit request.object, the patch is against the original.
  const original = copyObject(request.object!);
  const decision = await review(webhook, request);
  if (!decision.allowed) throw new Error(`denied: ${decision.message}`);
  if (!('object' in decision)) return { result: original, patchLength: 0, decision };
  const patch = computePatch(original, decision.object);
  return { result: applyPatch(original, patch), patchLength: patch.length, decision };
}

/** Runs the webhook again on its own output, as a reinvocation would: nothing must change. */
async function assertIdempotent(t: Test, webhook: Webhook, object: KubeObject): Promise<void> {
  const again = await review(webhook, admissionRequest(object));
  t.same(again, { allowed: true }, 'a second run changes nothing (safe to reinvoke)');
}

const defaultLabels = webhookFrom(`webhooks:
  - name: default-labels
    kind: defaultLabels
    params:
      labels:
        kube-admission-server/defaulted: "true"
        team: unknown
      annotations:
        example.com/owner: platform team
`);

t.test('defaultLabels adds absent labels and annotations to a plain Pod, never overwriting', async (t) => {
  t.equal(defaultLabels.type, 'mutating');
  t.equal(defaultLabels.failurePolicy, 'Ignore', 'mutating rules fail open by default');
  t.equal(defaultLabels.reinvocationPolicy, 'Never');
  const original = pod({ containers: [{ name: 'app', image: 'nginx' }] }, { app: 'web', team: 'payments' });
  const { result, patchLength } = await admitted(defaultLabels, admissionRequest(original));
  t.ok(patchLength > 0);
  t.same(result.metadata?.labels, { app: 'web', team: 'payments', 'kube-admission-server/defaulted': 'true' }, 'team keeps the value the user set');
  t.same(result.metadata?.annotations, { 'example.com/owner': 'platform team' });
  await assertIdempotent(t, defaultLabels, result);

  const bare: KubeObject = { apiVersion: 'v1', kind: 'Pod', spec: { containers: [] } };
  const { result: bareResult } = await admitted(defaultLabels, admissionRequest(bare));
  t.same(bareResult.metadata, {
    labels: { 'kube-admission-server/defaulted': 'true', team: 'unknown' },
    annotations: { 'example.com/owner': 'platform team' },
  }, 'an object without metadata gets some');
});

const defaultResources = webhookFrom(`webhooks:
  - name: default-resources
    kind: defaultResources
    params:
      requests: { cpu: 100m, memory: 128Mi }
      limits: { memory: 512Mi }
`);

t.test('defaultResources fills requests and limits on containers without them', async (t) => {
  const original = pod({
    initContainers: [{ name: 'setup', image: 'busybox' }],
    containers: [
      { name: 'app', image: 'nginx' },
      { name: 'sized', image: 'nginx', resources: { requests: { cpu: '1', memory: '1Gi' } } },
      { name: 'limited', image: 'nginx', resources: { limits: { cpu: '2', memory: '256Mi' } } },
    ],
    ephemeralContainers: [{ name: 'debug', image: 'busybox' }],
  });
  const { result } = await admitted(defaultResources, admissionRequest(original));
  const spec = result['spec'] as { initContainers: { resources?: unknown }[]; containers: { resources?: unknown }[]; ephemeralContainers: { resources?: unknown }[] };
  t.same(spec.initContainers[0]?.resources, { limits: { memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  t.same(spec.containers[0]?.resources, { limits: { memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } });
  t.same(
    spec.containers[1]?.resources,
    { requests: { cpu: '1', memory: '1Gi' } },
    'a memory limit below the container\'s own request is not defaulted (the pod would be invalid)',
  );
  t.same(
    spec.containers[2]?.resources,
    { limits: { cpu: '2', memory: '256Mi' } },
    'requests are left to the apiserver where limits are set (it defaults them to the limits)',
  );
  t.same(spec.ephemeralContainers[0]?.resources, undefined, 'ephemeral containers may not have resources');
  await assertIdempotent(t, defaultResources, result);
});

t.test('defaultResources works on Deployment and CronJob templates', async (t) => {
  const { result } = await admitted(defaultResources, admissionRequest(deployment({ containers: [{ name: 'app', image: 'nginx' }] })));
  t.same(
    (result['spec'] as { template: { spec: { containers: { resources: unknown }[] } } }).template.spec.containers[0]?.resources,
    { limits: { memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
  );
  await assertIdempotent(t, defaultResources, result);

  const { result: job } = await admitted(defaultResources, admissionRequest(cronJob({ containers: [{ name: 'run', image: 'nginx', resources: { requests: { cpu: '2' } } }] })));
  const jobSpec = (job['spec'] as { jobTemplate: { spec: { template: { spec: { containers: { resources: unknown }[] } } } } }).jobTemplate.spec.template.spec;
  t.same(jobSpec.containers[0]?.resources, { requests: { cpu: '2', memory: '128Mi' }, limits: { memory: '512Mi' } });
  await assertIdempotent(t, defaultResources, job);
});

t.test('a container that already has everything is left alone: no patch at all', async (t) => {
  const complete = pod({ containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '1Gi' } } }] });
  t.same(await review(defaultResources, admissionRequest(complete)), { allowed: true });
});

t.test('mutating rules never mutate on DELETE and skip objects without pod specs', async (t) => {
  const existing = pod({ containers: [{ name: 'app' }] }, {});
  t.same(await review(defaultLabels, admissionRequest(null, { operation: 'DELETE', oldObject: existing })), { allowed: true });
  t.same(await review(defaultResources, admissionRequest(null, { operation: 'DELETE', oldObject: existing })), { allowed: true });
  const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
  t.same(await review(defaultResources, admissionRequest(configMap)), { allowed: true });
});

t.test('a mutating rule in warn or audit mode reports what it would change and changes nothing', async (t) => {
  const body = (mode: string): string => `webhooks:
  - name: default-labels
    kind: defaultLabels
    mode: ${mode}
    params: { labels: { team: unknown } }
`;
  const request = admissionRequest(pod({ containers: [] }, { app: 'web' }));
  t.same(await review(webhookFrom(body('warn')), request), { allowed: true, warnings: ['default-labels: would add label team="unknown"'] });
  t.same(await review(webhookFrom(body('audit')), request), { allowed: true, auditAnnotations: { 'policy-would-mutate': 'would add label team="unknown"' } });
});

t.test('defaultResources is idempotent and never makes a request exceed its limit (property)', async (t) => {
  const quantity = fc.constantFrom('10m', '100m', '1', '2', '64Mi', '128Mi', '1Gi', '4Gi');
  const amounts = fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] });
  const container = fc.record({ name: fc.constantFrom('a', 'b'), resources: fc.record({ requests: amounts, limits: amounts }, { requiredKeys: [] }) }, { requiredKeys: ['name'] });
  const params = fc
    .record({ requests: amounts, limits: amounts })
    .filter(({ requests, limits }) =>
      (['cpu', 'memory'] as const).every((r) => requests[r] === undefined || limits[r] === undefined || parseQuantity(requests[r])! <= parseQuantity(limits[r])!),
    );
  const valid = (c: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }): boolean =>
    (['cpu', 'memory'] as const).every((r) => {
      const request = c.resources?.requests?.[r];
      const limit = c.resources?.limits?.[r];
      return request === undefined || limit === undefined || parseQuantity(request)! <= parseQuantity(limit)!;
    });
  fc.assert(
    fc.property(fc.array(container, { maxLength: 3 }).filter((cs) => cs.every(valid)), params, (containers, bound) => {
      const object = pod({ containers: structuredClone(containers) });
      applyDefaultResources(object, bound);
      const once = structuredClone(object);
      const secondChanges = applyDefaultResources(object, bound);
      const after = (object['spec'] as { containers: Parameters<typeof valid>[0][] }).containers;
      return secondChanges.length === 0 && JSON.stringify(object) === JSON.stringify(once) && after.every(valid);
    }),
  );
  t.pass('property held for the generated pods');
});
