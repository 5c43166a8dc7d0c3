// Validation of webhook configurations (local-cluster/CONTRACT.md section 4): each rule with its message, the 422
// Status body, the defaults visible on read, and ratcheting on update.
import t from 'tap';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest } from '../local-cluster/fake-apiserver/raw-client.js';

const api = await startFakeApiServer();
t.teardown(() => api.close());

const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

type Hook = Record<string, unknown>;
const validHook = (overrides: Hook = {}): Hook => ({
  name: 'pods.policy.example.com',
  clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/validate-pods' }, caBundle: 'Y2E=' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...overrides,
});
const body = (webhooks: Hook[], name = 'demo') => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name }, webhooks });

async function messageFor(webhooks: Hook[], path = VWC, name = 'demo'): Promise<string> {
  const reply = await rawRequest(api, 'POST', path, { body: { ...body(webhooks, name), kind: path === MWC ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration' } });
  if (reply.status === 201) {
    await rawRequest(api, 'DELETE', `${path}/${name}`);
    return 'created';
  }
  return `${reply.status} ${(reply.json as { message: string }).message}`;
}

t.test('the contract example: two errors, bracketed, with causes', async (t) => {
  const reply = await rawRequest(api, 'POST', VWC, { body: body([validHook({ name: 'hook', sideEffects: undefined })]) });
  t.equal(reply.status, 422);
  t.equal(reply.headers['content-type'], 'application/json');
  t.same(reply.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'ValidatingWebhookConfiguration.admissionregistration.k8s.io "demo" is invalid: [webhooks[0].name: Invalid value: "hook": should be a domain with at least three segments separated by dots, webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun]',
    reason: 'Invalid',
    details: {
      name: 'demo', group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration',
      causes: [
        { reason: 'FieldValueInvalid', message: 'Invalid value: "hook": should be a domain with at least three segments separated by dots', field: 'webhooks[0].name' },
        { reason: 'FieldValueRequired', message: 'Required value: must specify one of None, NoneOnDryRun', field: 'webhooks[0].sideEffects' },
      ],
    },
    code: 422,
  });
  t.equal(reply.text.indexOf('"kind"'), 1, 'kind comes first, as the Go struct orders it');
});

const PREFIX = '422 ValidatingWebhookConfiguration.admissionregistration.k8s.io "demo" is invalid: ';
const rule = (overrides: Hook) => [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], ...overrides }];
const SUBDOMAIN = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

const cases: [string, Hook[], string][] = [
  ['valid', [validHook()], 'created'],
  ['no webhooks at all', [], 'created'],
  ['name required', [validHook({ name: '' })], 'webhooks[0].name: Required value'],
  ['name with two segments', [validHook({ name: 'foo.com' })], 'webhooks[0].name: Invalid value: "foo.com": should be a domain with at least three segments separated by dots'],
  ['name not a subdomain', [validHook({ name: 'Foo.example.com' })], `webhooks[0].name: Invalid value: "Foo.example.com": ${SUBDOMAIN}`],
  ['duplicate names', [validHook(), validHook()], 'webhooks[1].name: Duplicate value: "pods.policy.example.com"'],
  ['operations required', [validHook({ rules: rule({ operations: [] }) })], 'webhooks[0].rules[0].operations: Required value'],
  ['operation unknown', [validHook({ rules: rule({ operations: ['PATCH'] }) })], 'webhooks[0].rules[0].operations[0]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'],
  ['operations * with others', [validHook({ rules: rule({ operations: ['*', 'CREATE'] }) })], 'webhooks[0].rules[0].operations: Invalid value: ["*","CREATE"]: if \'*\' is present, must not specify other operations'],
  ['apiGroups required', [validHook({ rules: rule({ apiGroups: [] }) })], 'webhooks[0].rules[0].apiGroups: Required value'],
  ['apiGroups * with others', [validHook({ rules: rule({ apiGroups: ['*', 'apps'] }) })], 'webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if \'*\' is present, must not specify other API groups'],
  ['apiVersions required', [validHook({ rules: rule({ apiVersions: [] }) })], 'webhooks[0].rules[0].apiVersions: Required value'],
  ['apiVersions empty entry', [validHook({ rules: rule({ apiVersions: ['v1', ''] }) })], 'webhooks[0].rules[0].apiVersions[1]: Required value'],
  ['apiVersions * with others', [validHook({ rules: rule({ apiVersions: ['*', 'v1'] }) })], 'webhooks[0].rules[0].apiVersions: Invalid value: ["*","v1"]: if \'*\' is present, must not specify other API versions'],
  ['resources required', [validHook({ rules: rule({ resources: [] }) })], 'webhooks[0].rules[0].resources: Required value'],
  ['resources empty entry', [validHook({ rules: rule({ resources: [''] }) })], 'webhooks[0].rules[0].resources[0]: Required value'],
  ['*/* with others', [validHook({ rules: rule({ resources: ['*/*', 'pods'] }) })], 'webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if \'*/*\' is present, must not specify other resources'],
  ['* with plain resources', [validHook({ rules: rule({ resources: ['*', 'pods'] }) })], 'webhooks[0].rules[0].resources: Invalid value: ["*","pods"]: if \'*\' is present, must not specify other resources without subresources'],
  ['x/* with x/y', [validHook({ rules: rule({ resources: ['pods/*', 'pods/status'] }) })], 'webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if \'pods/*\' is present, must not specify pods/status'],
  ['*/y with x/y', [validHook({ rules: rule({ resources: ['*/status', 'pods/status'] }) })], 'webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if \'*/status\' is present, must not specify pods/status'],
  ['subresources allowed', [validHook({ rules: rule({ resources: ['pods', 'pods/status', 'deployments/scale'] }) })], 'created'],
  ['scope unknown', [validHook({ rules: rule({ scope: 'Global' }) })], 'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"'],
  ['failurePolicy', [validHook({ failurePolicy: 'Maybe' })], 'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"'],
  ['matchPolicy', [validHook({ matchPolicy: 'Loose' })], 'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"'],
  ['sideEffects required', [validHook({ sideEffects: undefined })], 'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun'],
  ['sideEffects Unknown on create', [validHook({ sideEffects: 'Unknown' })], 'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"'],
  ['timeout 0', [validHook({ timeoutSeconds: 0 })], 'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds'],
  ['timeout 31', [validHook({ timeoutSeconds: 31 })], 'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds'],
  ['timeout 30', [validHook({ timeoutSeconds: 30 })], 'created'],
  ['review versions required', [validHook({ admissionReviewVersions: [] })], 'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1'],
  ['review versions duplicate', [validHook({ admissionReviewVersions: ['v1', 'v1'] })], 'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": duplicate version'],
  ['review versions unrecognised', [validHook({ admissionReviewVersions: ['v2'] })], 'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, v1beta1'],
  ['review version not a DNS-1035 label', [validHook({ admissionReviewVersions: ['v1', 'V2'] })], `webhooks[0].admissionReviewVersions[1]: Invalid value: "V2": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`],
  ['selector operator', [validHook({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })], 'webhooks[0].namespaceSelector.matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'],
  ['In without values', [validHook({ objectSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } })], "webhooks[0].objectSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
  ['Exists with values', [validHook({ namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } })], "webhooks[0].namespaceSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"],
  ['selector label value', [validHook({ namespaceSelector: { matchLabels: { env: 'a b' } } })], "webhooks[0].namespaceSelector.matchLabels: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
  ['neither url nor service', [validHook({ clientConfig: { caBundle: 'Y2E=' } })], 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
  ['both url and service', [validHook({ clientConfig: { url: 'https://a.example.com/x', service: { name: 'a', namespace: 'b' } } })], 'webhooks[0].clientConfig: Required value: exactly one of url or service is required'],
  ['url http', [validHook({ clientConfig: { url: 'http://a.example.com/x' } })], 'webhooks[0].clientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; desired format: https://host[/path]'],
  ['url user info', [validHook({ clientConfig: { url: 'https://me@a.example.com/x' } })], 'webhooks[0].clientConfig.url: Invalid value: "me": user information is not permitted in the URL'],
  ['url fragment', [validHook({ clientConfig: { url: 'https://a.example.com/x#frag' } })], 'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL'],
  ['url query', [validHook({ clientConfig: { url: 'https://a.example.com/x?a=b' } })], 'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL'],
  ['url ok', [validHook({ clientConfig: { url: 'https://a.example.com:8443/x' } })], 'created'],
  ['service name', [validHook({ clientConfig: { service: { namespace: 'webhooks' } } })], 'webhooks[0].clientConfig.service.name: Required value: service name is required'],
  ['service namespace', [validHook({ clientConfig: { service: { name: 'hook' } } })], 'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required'],
  ['service port', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', port: 70000 } } })], 'webhooks[0].clientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive'],
  ['service path capital', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/Validate' } } })], `webhooks[0].clientConfig.service.path: Invalid value: "/Validate": segment[0]: ${SUBDOMAIN}`],
  ['service path underscore', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/validate_pods' } } })], `webhooks[0].clientConfig.service.path: Invalid value: "/validate_pods": segment[0]: ${SUBDOMAIN}`],
  ['service path relative', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: 'validate' } } })], 'webhooks[0].clientConfig.service.path: Invalid value: "validate": must start with a \'/\''],
  ['service path empty segment', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/a//b' } } })], 'webhooks[0].clientConfig.service.path: Invalid value: "/a//b": segment[1] may not be empty'],
  ['service path ok', [validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/validate/pods' } } })], 'created'],
  ['matchConditions too many', [validHook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' })) })], 'webhooks[0].matchConditions: Too many: 65: must have at most 64 items'],
  ['matchConditions name required', [validHook({ matchConditions: [{ expression: 'true' }] })], 'webhooks[0].matchConditions[0].name: Required value'],
  ['matchConditions duplicate', [validHook({ matchConditions: [{ name: 'a', expression: 'true' }, { name: 'a', expression: 'true' }] })], 'webhooks[0].matchConditions[1].name: Duplicate value: "a"'],
  ['matchConditions expression required', [validHook({ matchConditions: [{ name: 'a' }] })], 'webhooks[0].matchConditions[0].expression: Required value'],
];

t.test('each rule of section 4.1 with its message', async (t) => {
  for (const [label, webhooks, expected] of cases) {
    t.equal(await messageFor(webhooks), expected === 'created' ? 'created' : `${PREFIX}${expected}`, label);
  }
});

t.test('metadata.name and mutating-only rules', async (t) => {
  t.equal(await messageFor([validHook()], VWC, 'Demo'), `422 ValidatingWebhookConfiguration.admissionregistration.k8s.io "Demo" is invalid: metadata.name: Invalid value: "Demo": ${SUBDOMAIN}`);
  t.equal(await messageFor([validHook({ reinvocationPolicy: 'Always' })], MWC), '422 MutatingWebhookConfiguration.admissionregistration.k8s.io "demo" is invalid: webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"');
  const missingName = await rawRequest(api, 'POST', VWC, { body: { metadata: {}, webhooks: [] } });
  t.equal((missingName.json as { message: string }).message, 'ValidatingWebhookConfiguration.admissionregistration.k8s.io "" is invalid: metadata.name: Required value: name or generateName is required');
});

t.test('defaults of section 4.3 are stored and visible on read', async (t) => {
  const created = await rawRequest(api, 'POST', MWC, { body: { metadata: { name: 'defaults' }, webhooks: [validHook()] } });
  t.equal(created.status, 201);
  const read = await rawRequest(api, 'GET', `${MWC}/defaults`);
  const hook = (read.json as { webhooks: Hook[] }).webhooks[0]!;
  t.equal(hook.failurePolicy, 'Fail');
  t.equal(hook.matchPolicy, 'Equivalent');
  t.same(hook.namespaceSelector, {});
  t.same(hook.objectSelector, {});
  t.equal(hook.timeoutSeconds, 10);
  t.equal(hook.reinvocationPolicy, 'Never');
  t.equal((hook.rules as Hook[])[0]!.scope, '*');
  t.equal(((hook.clientConfig as Hook).service as Hook).port, 443);
  t.equal(hook.sideEffects, 'None', 'sideEffects has no default; it stays as sent');
  const validating = await rawRequest(api, 'POST', VWC, { body: body([validHook()], 'vdefaults') });
  t.notOk('reinvocationPolicy' in (validating.json as { webhooks: Hook[] }).webhooks[0]!, 'no reinvocationPolicy on validating webhooks');
});

t.test('ratcheting on update: rules already broken in the old object are tolerated', async (t) => {
  // Seed a leftover v1beta1-era object directly: validation would refuse it on create.
  const seeded = api.store.put('validatingwebhookconfigurations', body([validHook({ sideEffects: 'Unknown' }), validHook({ sideEffects: 'Unknown' })], 'legacy'));
  const update = { ...seeded, webhooks: (seeded.webhooks as Hook[]).map((h) => ({ ...h, timeoutSeconds: 5 })) };
  const reply = await rawRequest(api, 'PUT', `${VWC}/legacy`, { body: update });
  t.equal(reply.status, 200, 'Unknown sideEffects and duplicate names kept on update when the old object had them');
  const fresh = api.store.put('validatingwebhookconfigurations', body([validHook()], 'strict'));
  const broken = await rawRequest(api, 'PUT', `${VWC}/strict`, { body: { ...fresh, webhooks: [validHook({ sideEffects: 'Unknown' })] } });
  t.equal(broken.status, 422, 'but not introduced into an object that followed the rule');
  t.match((broken.json as { message: string }).message, 'webhooks[0].sideEffects: Unsupported value: "Unknown"');
});

t.test('caBundle must be base64: PEM text pasted in fails to decode (400)', async (t) => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const reply = await rawRequest(api, 'POST', VWC, { body: body([validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks' }, caBundle: pem } })]) });
  t.same(reply.json, {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'ValidatingWebhookConfiguration in version "v1" cannot be handled as a ValidatingWebhookConfiguration: illegal base64 data at input byte 0',
    reason: 'BadRequest', code: 400,
  });
  const encoded = await rawRequest(api, 'POST', VWC, { body: body([validHook({ clientConfig: { service: { name: 'hook', namespace: 'webhooks' }, caBundle: Buffer.from(pem).toString('base64') } })], 'encoded') });
  t.equal(encoded.status, 201);
});
