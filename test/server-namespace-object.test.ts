// The review path hands handlers the request's Namespace from the server's Namespace source (the
// lifecycle's cache), shaped as kube-apiserver's namespaceObject; a namespace the source does not
// know yet gets the webhook's failurePolicy answer with a message that says so.
import t from 'tap';
import { parsePolicy } from '../src/policy/policy-file.js';
import type { AdmissionContext, KubeObject } from '../src/admission/types.js';
import { defineValidatingWebhook } from '../src/webhooks/define-webhook.js';
import { createTestCa, podReview, request, serve, type ReviewResponse } from './support/server/server-harness.js';

const ca = createTestCa();

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: prod-registry
    kind: cel
    failurePolicy: Fail
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods, namespaces] }]
    validations:
      - expression: "namespaceObject == null || namespaceObject.metadata.labels.env != 'prod' || object.spec.containers.all(c, c.image.startsWith('registry.example/'))"
        messageExpression: "'pods in ' + namespaceObject.metadata.name + ' (env prod) pull from registry.example only'"
  - name: soft
    kind: cel
    failurePolicy: Ignore
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "namespaceObject.metadata.labels.env != 'frozen'"
  - name: plain
    kind: cel
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations: [{ expression: "object.metadata.name != ''" }]
`;

// As the API serves it: with managedFields, ownerReferences-free; namespaceObject keeps only
// spec, status and the main metadata fields (apiserver's CreateNamespaceObject).
const TEAM_A: KubeObject = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: {
    name: 'team-a',
    uid: 'ns-uid-1',
    resourceVersion: '42',
    labels: { env: 'prod', 'kubernetes.io/metadata.name': 'team-a' },
    managedFields: [{ manager: 'kubectl' }],
  },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
};

t.test('cel rules and custom handlers read namespaceObject from the source; unknown namespaces get failurePolicy', async (t) => {
  const { namespaceObjectOf } = await import('../src/admission/namespace-object.js');
  const known = new Map([['team-a', namespaceObjectOf(TEAM_A)]]);
  const parsed = parsePolicy(POLICY, 'policy.yaml');
  if (!parsed.ok) throw new Error(parsed.errors.join('\n'));
  t.same(
    parsed.webhooks.map((w) => [w.name, w.readsNamespaceObject ?? false]),
    [
      ['prod-registry', true],
      ['soft', true],
      ['plain', false],
    ],
    'decided at load from the compiled expressions',
  );
  const contexts: AdmissionContext[] = [];
  const custom = defineValidatingWebhook({
    name: 'custom',
    readsNamespaceObject: true,
    rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods', 'namespaces'] }],
    handler: (_request, context) => {
      contexts.push(context);
      return { allowed: true };
    },
  });
  t.equal(custom.readsNamespaceObject, true, 'a custom webhook declares that it reads namespaceObject');
  const served = await serve([...parsed.webhooks, custom], { ca, namespaces: { get: (name) => known.get(name) } });
  t.teardown(() => served.server.close(1000));
  const review = async (path: string, body: Record<string, unknown>) =>
    ((await request(served.port, `${path}?timeout=5s`, body, { ca: ca.certPem })).json as ReviewResponse).response;
  const inNamespace = (namespace: string, image = 'nginx') => {
    const body = podReview({ image }) as { request: Record<string, unknown> & { object: { metadata: Record<string, unknown> } } };
    body.request['namespace'] = namespace;
    body.request.object.metadata['namespace'] = namespace;
    return body;
  };

  t.match(await review('/validate/prod-registry', inNamespace('team-a')), {
    allowed: false,
    status: { code: 422, message: 'pods in team-a (env prod) pull from registry.example only' },
  });
  t.match(await review('/validate/prod-registry', inNamespace('team-a', 'registry.example/web:1')), { allowed: true });

  const unknown = await review('/validate/prod-registry', inNamespace('brand-new'));
  t.match(unknown, { allowed: false, status: { code: 500, reason: 'InternalError' } }, 'failurePolicy Fail: a 500, as a failed call');
  const failure = served.logs.lines.find((l) => l['msg'] === 'admission review answered by failurePolicy' && l['webhook'] === 'prod-registry');
  t.match(failure?.['failure'], /namespace "brand-new" is not in this server's Namespace cache \(yet\)/, 'the log says why');
  t.match(await review('/validate/soft', inNamespace('brand-new')), { allowed: true, warnings: [/failed with an internal error; allowed by failurePolicy Ignore/] });
  t.match(await review('/validate/plain', inNamespace('brand-new')), { allowed: true }, 'a rule that does not read namespaceObject does not care');

  await review('/validate/custom', inNamespace('team-a'));
  t.same(contexts.at(-1)?.namespaceObject, {
    metadata: { name: 'team-a', uid: 'ns-uid-1', resourceVersion: '42', labels: { env: 'prod', 'kubernetes.io/metadata.name': 'team-a' } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }, 'custom handlers get the same shape: no apiVersion, kind or managedFields');
  await review('/validate/custom', inNamespace('brand-new'));
  t.equal(contexts.at(-1)!.namespaceObject, undefined, 'unknown: undefined');

  const namespaceCreate = podReview() as { request: Record<string, unknown> };
  Object.assign(namespaceCreate.request, {
    kind: { group: '', version: 'v1', kind: 'Namespace' },
    resource: { group: '', version: 'v1', resource: 'namespaces' },
    name: 'team-a',
    namespace: 'team-a',
    object: TEAM_A,
  });
  t.match(await review('/validate/prod-registry', namespaceCreate), { allowed: true }, 'a request on a Namespace has namespaceObject null, as in a VAP');
  await review('/validate/custom', namespaceCreate);
  t.equal(contexts.at(-1)?.namespaceObject, null);
});
