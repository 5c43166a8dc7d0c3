// CustomResourceDefinitions in the double, judged by apiextensions-apiserver's source and tests:
// the CRD's own validation and conditions, discovery, the REST semantics of custom resources,
// validation by the version's schema (expected texts from pkg/apiserver/validation's tests),
// pruning and strict field validation, defaults, the status subresource, printer columns, the
// versions of a multi-version CRD, the size limits, and the CRD's deletion.
import { request } from 'node:https';
import t, { type Test } from 'tap';
import { ADMIN_USER, startFakeApiServer, type FakeApiServer, type KubeObject, type StatusBody } from '../local-cluster/fake-apiserver/index.js';
import { rawRequest, type RawReply } from '../local-cluster/fake-apiserver/raw-client.js';
import { CRDS_PATH, REPORT_CRDS, caughtUp, shippedCrd, widgetCrd } from './support/kube/custom-resources.js';

const REPORTS = '/apis/openreports.io/v1alpha1/namespaces/default/reports';
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

async function double(t: Test, options: Parameters<typeof startFakeApiServer>[0] = {}): Promise<FakeApiServer> {
  const api = await startFakeApiServer(options);
  t.teardown(() => api.close());
  return api;
}

/** Creates the CRD and waits (bounded) until it is Established. */
async function install(t: Test, api: FakeApiServer, crd: KubeObject): Promise<KubeObject> {
  const created = await rawRequest(api, 'POST', CRDS_PATH, { body: crd });
  t.equal(created.status, 201, `CRD ${crd.metadata?.name ?? ''} created: ${created.text.slice(0, 300)}`);
  return (await api.store.waitFor('customresourcedefinitions', undefined, crd.metadata?.name ?? '', (o) => established(o), { timeoutMs: 5000 }))!;
}

const established = (crd: KubeObject | undefined): boolean =>
  ((crd?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');

const statusOf = (reply: RawReply): StatusBody => reply.json as StatusBody;
const causes = (reply: RawReply): string[] => (statusOf(reply).details?.causes ?? []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`);

const report = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'openreports.io/v1alpha1',
  kind: 'Report',
  metadata: { name, namespace: 'default' },
  ...extra,
});

t.test('a CRD is refused as apiextensions validates it', async (t) => {
  const api = await double(t);
  const refused = async (crd: KubeObject): Promise<RawReply> => {
    const reply = await rawRequest(api, 'POST', CRDS_PATH, { body: crd });
    t.equal(reply.status, 422, reply.text.slice(0, 400));
    return reply;
  };
  const misnamed = widgetCrd();
  misnamed.metadata = { name: 'gadgets.example.com' };
  t.same(causes(await refused(misnamed)), ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group']);

  const twoStorage = widgetCrd({ versions: ['v1', 'v2'].map((name) => ({ name, served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } })) });
  t.ok(causes(await refused(twoStorage)).some((c) => /^spec\.versions: Invalid value: .*: must have exactly one version marked as storage version$/.test(c)));

  const noScope = widgetCrd();
  delete (noScope.spec as { scope?: string }).scope;
  t.same(causes(await refused(noScope)), ['spec.scope: Required value']);
  const badScope = widgetCrd();
  (badScope.spec as { scope: string }).scope = 'Global';
  t.same(causes(await refused(badScope)), ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']);

  const dotless = widgetCrd({ group: 'example' });
  t.same(causes(await refused(dotless)), ['spec.group: Invalid value: "example": should be a domain with at least one dot']);

  // One version: its schema is checked at the top level, as v1's conversion moves it there.
  const untyped = widgetCrd({ schema: { type: 'object', properties: { spec: { properties: { size: { type: 'integer' } } } } } });
  t.same(causes(await refused(untyped)), ['spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields']);
  const notObject = widgetCrd({ schema: { type: 'string' } });
  t.same(causes(await refused(notObject)), ['spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root']);
  const metadataFields = widgetCrd({ schema: { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } } });
  t.same(causes(await refused(metadataFields)), [
    'spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
  ]);
  const noSchema = widgetCrd({ versions: [{ name: 'v1', served: true, storage: true }] });
  t.same(causes(await refused(noSchema)), ['spec.versions[0].schema.openAPIV3Schema: Required value']);
  t.equal(api.store.list('customresourcedefinitions').length, 0, 'nothing stored');
});

t.test('a new CRD: names accepted, Established, storedVersions; a name the group already uses is a conflict', async (t) => {
  const api = await double(t);
  const created = await rawRequest(api, 'POST', CRDS_PATH, { body: await shippedCrd(REPORT_CRDS.reports) });
  t.equal(created.status, 201);
  t.same((created.json as KubeObject).status, { acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1alpha1'] }, 'the create answers before any controller ran');
  t.same((created.json as KubeObject).spec, { ...((await shippedCrd(REPORT_CRDS.reports)).spec as object), conversion: { strategy: 'None' } }, 'conversion defaults to None');
  const crd = await api.store.waitFor('customresourcedefinitions', undefined, 'reports.openreports.io', established, { timeoutMs: 5000 });
  const status = crd?.status as { acceptedNames: unknown; conditions: { type: string; status: string; reason: string; message: string }[] };
  t.same(status.acceptedNames, { plural: 'reports', singular: 'report', shortNames: ['reps'], kind: 'Report', listKind: 'ReportList' });
  t.same(status.conditions.map(({ type, status, reason, message }) => ({ type, status, reason, message })), [
    { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
    { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
  ]);

  // Another CRD of the group asking for kind Report: the naming controller refuses the name.
  const clash = widgetCrd({ group: 'openreports.io', plural: 'findings', kind: 'Report' });
  (clash.spec as { names: { listKind: string } }).names.listKind = 'FindingList';
  t.equal((await rawRequest(api, 'POST', CRDS_PATH, { body: clash })).status, 201);
  const refused = await api.store.waitFor('customresourcedefinitions', undefined, 'findings.openreports.io', (o) => ((o?.status as { conditions?: unknown[] })?.conditions ?? []).length > 0, { timeoutMs: 5000 });
  const conditions = (refused?.status as { conditions: { type: string; status: string; reason: string; message: string }[] }).conditions;
  t.has(conditions.find((c) => c.type === 'NamesAccepted'), { status: 'False', reason: 'KindConflict', message: '"Report" is already in use' });
  t.has(conditions.find((c) => c.type === 'Established'), { status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
  t.equal((await rawRequest(api, 'GET', '/apis/openreports.io/v1alpha1/findings')).status, 404, 'not served without accepted names');
});

t.test('discovery: the group, its versions by Kubernetes priority, the resources with names and scope', async (t) => {
  const api = await double(t);
  await install(t, api, await shippedCrd(REPORT_CRDS.policyReports));
  await install(t, api, await shippedCrd(REPORT_CRDS.clusterReports));
  const group = (await rawRequest(api, 'GET', '/apis/wgpolicyk8s.io')).json as { versions: { version: string }[]; preferredVersion: { version: string } };
  t.same(group.versions.map((v) => v.version), ['v1beta1', 'v1alpha2', 'v1alpha1'], 'every served version, GA-beta-alpha order');
  t.equal(group.preferredVersion.version, 'v1beta1');
  const list = (await rawRequest(api, 'GET', '/apis/wgpolicyk8s.io/v1alpha2')).json as { resources: Record<string, unknown>[] };
  t.has(list.resources, [{ name: 'policyreports', singularName: 'policyreport', namespaced: true, kind: 'PolicyReport', shortNames: ['polr'] }]);
  const cluster = (await rawRequest(api, 'GET', '/apis/openreports.io/v1alpha1')).json as { resources: Record<string, unknown>[] };
  t.has(cluster.resources, [{ name: 'clusterreports', singularName: 'clusterreport', namespaced: false, kind: 'ClusterReport', shortNames: ['creps'] }]);
  const admission = (await rawRequest(api, 'GET', '/apis/admissionregistration.k8s.io')).json as { preferredVersion: { version: string } };
  t.equal(admission.preferredVersion.version, 'v1', 'a built-in group with a beta version still prefers v1');
});

t.test('REST: create, get, list with paging and selectors, update, conflicts, delete, in kube-apiserver\'s bodies', async (t) => {
  const api = await double(t);
  await install(t, api, await shippedCrd(REPORT_CRDS.reports));
  const created = await rawRequest(api, 'POST', REPORTS, { body: report('r1', { metadata: { name: 'r1', labels: { team: 'a' } }, summary: { pass: 1 } }) });
  t.equal(created.status, 201, created.text);
  const stored = created.json as KubeObject;
  t.equal(stored.metadata?.generation, 1);
  const again = await rawRequest(api, 'POST', REPORTS, { body: report('r1') });
  t.same(statusOf(again), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'reports.openreports.io "r1" already exists', reason: 'AlreadyExists', details: { name: 'r1', group: 'openreports.io', kind: 'reports' }, code: 409 });
  const missing = await rawRequest(api, 'GET', `${REPORTS}/nope`);
  t.same(statusOf(missing), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'reports.openreports.io "nope" not found', reason: 'NotFound', details: { name: 'nope', group: 'openreports.io', kind: 'reports' }, code: 404 });
  for (const name of ['r2', 'r3']) t.equal((await rawRequest(api, 'POST', REPORTS, { body: report(name) })).status, 201);

  const first = (await rawRequest(api, 'GET', `${REPORTS}?limit=2`)).json as { kind: string; metadata: { continue?: string; remainingItemCount?: number }; items: KubeObject[] };
  t.equal(first.kind, 'ReportList', 'the CRD\'s listKind');
  t.same(first.items.map((i) => i.metadata?.name), ['r1', 'r2']);
  t.equal(first.metadata.remainingItemCount, 1);
  const rest = (await rawRequest(api, 'GET', `${REPORTS}?limit=2&continue=${first.metadata.continue ?? ''}`)).json as { items: KubeObject[] };
  t.same(rest.items.map((i) => i.metadata?.name), ['r3']);
  const labelled = (await rawRequest(api, 'GET', '/apis/openreports.io/v1alpha1/reports?labelSelector=team%3Da')).json as { items: KubeObject[] };
  t.same(labelled.items.map((i) => i.metadata?.name), ['r1']);
  const byName = (await rawRequest(api, 'GET', `${REPORTS}?fieldSelector=metadata.name%3Dr2`)).json as { items: KubeObject[] };
  t.same(byName.items.map((i) => i.metadata?.name), ['r2']);
  const badField = await rawRequest(api, 'GET', `${REPORTS}?fieldSelector=summary.pass%3D1`);
  t.equal(badField.status, 400);
  t.equal(statusOf(badField).message, 'field label not supported: summary.pass');

  // AllowUnconditionalUpdate is false for custom resources.
  const unconditional = await rawRequest(api, 'PUT', `${REPORTS}/r1`, { body: report('r1', { summary: { pass: 2 } }) });
  t.equal(unconditional.status, 422);
  t.equal(statusOf(unconditional).message, 'Report.openreports.io "r1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update');
  const updated = await rawRequest(api, 'PUT', `${REPORTS}/r1`, { body: { ...stored, summary: { pass: 2 } } });
  t.equal(updated.status, 200, updated.text);
  t.equal((updated.json as KubeObject).metadata?.generation, 2, 'no spec: any change but metadata is a new generation');
  const labelOnly = await rawRequest(api, 'PATCH', `${REPORTS}/r1`, { body: { metadata: { labels: { team: 'b' } } }, contentType: 'application/merge-patch+json' });
  t.equal((labelOnly.json as KubeObject).metadata?.generation, 2, 'a metadata change is not');
  const stale = await rawRequest(api, 'PUT', `${REPORTS}/r1`, { body: { ...stored, summary: { pass: 3 } } });
  t.equal(stale.status, 409);
  t.equal(statusOf(stale).message, 'Operation cannot be fulfilled on reports.openreports.io "r1": the object has been modified; please apply your changes to the latest version and try again');

  const deleted = await rawRequest(api, 'DELETE', `${REPORTS}/r1`);
  t.equal(deleted.status, 200);
  t.has(deleted.json, { kind: 'Status', status: 'Success', details: { name: 'r1', group: 'openreports.io', kind: 'reports' } });
  t.equal((await rawRequest(api, 'GET', `${REPORTS}/r1`)).status, 404);

  const cluster = await install(t, api, await shippedCrd(REPORT_CRDS.clusterReports));
  t.ok(cluster);
  const clusterScoped = await rawRequest(api, 'POST', '/apis/openreports.io/v1alpha1/clusterreports', { body: { apiVersion: 'openreports.io/v1alpha1', kind: 'ClusterReport', metadata: { name: 'c1' } } });
  t.equal(clusterScoped.status, 201);
  t.notOk((clusterScoped.json as KubeObject).metadata?.namespace, 'cluster-scoped: no namespace');
  t.equal((await rawRequest(api, 'GET', '/apis/openreports.io/v1alpha1/namespaces/default/clusterreports/c1')).status, 404, 'not under a namespace');
});

t.test('the schema: 422 with the texts of apiextensions\' validation tests', async (t) => {
  const api = await double(t);
  // The "enum" and "!nullable" cases of pkg/apiserver/validation's TestValidateCustomResource.
  const schema = {
    type: 'object',
    properties: {
      field: {
        type: 'object',
        required: ['nestedint', 'nestedstring'],
        properties: { nestedint: { type: 'integer', enum: [1, 2] }, nestedstring: { type: 'string', enum: ['a', 'b'] } },
      },
      other: { type: 'object' },
    },
  };
  await install(t, api, widgetCrd({ schema }));
  const write = (body: Record<string, unknown>): Promise<RawReply> =>
    rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, ...body } });

  const wrongTypes = await write({ field: { nestedint: 'x', nestedstring: true } });
  t.equal(wrongTypes.status, 422);
  t.equal(
    statusOf(wrongTypes).message,
    'Widget.example.com "w" is invalid: [field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string", ' +
      'field.nestedint: Unsupported value: "x": supported values: "1", "2", ' +
      'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean", ' +
      'field.nestedstring: Unsupported value: true: supported values: "a", "b"]',
  );
  t.same(statusOf(wrongTypes).details?.causes?.map((c) => c.reason), ['FieldValueTypeInvalid', 'FieldValueNotSupported', 'FieldValueTypeInvalid', 'FieldValueNotSupported']);
  t.same(causes(await write({ field: {} })), ['field.nestedint: Required value', 'field.nestedstring: Required value']);
  for (const [value, type] of [['foo', 'string'], [42, 'integer'], [true, 'boolean'], [1.2, 'number'], [[], 'array']] as const) {
    t.same(causes(await write({ other: value })), [`other: Invalid value: "${type}": other in body must be of type object: "${type}"`], `other: ${JSON.stringify(value)}`);
  }
  t.equal((await write({ field: { nestedint: 2, nestedstring: 'b' } })).status, 201, 'a valid object is stored');
});

t.test('maxLength, maxItems and the reports\' enums, with ratcheting of unchanged values on update', async (t) => {
  const api = await double(t);
  const limited = { type: 'object', properties: { spec: { type: 'object', properties: { name: { type: 'string', maxLength: 5 }, tags: { type: 'array', maxItems: 2, items: { type: 'string' } } } } } };
  const loose = { type: 'object', properties: { spec: { type: 'object', properties: { name: { type: 'string' }, note: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } } } } };
  await install(t, api, widgetCrd({ schema: limited }));
  const tooMuch = await rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { name: 'abcdefg', tags: ['a', 'b', 'c'] } } });
  t.same(causes(tooMuch), ['spec.name: Too long: may not be more than 5 bytes', 'spec.tags: Too many: 3: must have at most 2 items']);

  // Loosen the schema, store a long name, tighten it again: the old value may stay, a new one may not.
  const crd = api.store.get('customresourcedefinitions', undefined, 'widgets.example.com')!;
  const versionsWith = (schema: unknown) => [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }];
  const loosened = await rawRequest(api, 'PUT', `${CRDS_PATH}/widgets.example.com`, { body: { ...crd, spec: { ...(crd.spec as object), versions: versionsWith(loose) } } });
  t.equal(loosened.status, 200, loosened.text);
  const stored = await rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { name: 'abcdefg' } } });
  t.equal(stored.status, 201, stored.text);
  const current = api.store.get('customresourcedefinitions', undefined, 'widgets.example.com')!;
  const tightened = await rawRequest(api, 'PUT', `${CRDS_PATH}/widgets.example.com`, { body: { ...current, spec: { ...(current.spec as object), versions: versionsWith({ ...limited, properties: { spec: { type: 'object', properties: { ...(limited.properties.spec.properties), note: { type: 'string' } } } } }) } } });
  t.equal(tightened.status, 200, tightened.text);
  const patch = (body: unknown): Promise<RawReply> => rawRequest(api, 'PATCH', `${WIDGETS}/w`, { body, contentType: 'application/merge-patch+json' });
  t.equal((await patch({ spec: { note: 'x' } })).status, 200, 'the unchanged long name is tolerated');
  t.same(causes(await patch({ spec: { name: 'abcdefgh' } })), ['spec.name: Too long: may not be more than 5 bytes'], 'a changed one is held to the schema');

  await install(t, api, await shippedCrd(REPORT_CRDS.reports));
  const badResult = await rawRequest(api, 'POST', REPORTS, { body: report('r', { results: [{ policy: 'p', result: 'failed', severity: 'urgent' }, { result: 'pass' }] }) });
  t.equal(
    statusOf(badResult).message,
    'Report.openreports.io "r" is invalid: [results[0].result: Unsupported value: "failed": supported values: "pass", "fail", "warn", "error", "skip", ' +
      'results[0].severity: Unsupported value: "urgent": supported values: "critical", "high", "low", "medium", "info", results[1].policy: Required value]',
  );
  t.same(causes(await rawRequest(api, 'POST', REPORTS, { body: report('r', { summary: { pass: 'one' } }) })), ['summary.pass: Invalid value: "string": summary.pass in body must be of type integer: "string"']);
});

t.test('unknown fields: pruned, warned about by default, refused under Strict, kept where the schema preserves them', async (t) => {
  const api = await double(t);
  // pruning_test.go's shape: alpha and beta declared, anything else unspecified.
  const schema = {
    type: 'object',
    properties: {
      alpha: { type: 'string' },
      beta: { type: 'number' },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { typed: { type: 'object', properties: { a: { type: 'string' } } } } },
    },
  };
  await install(t, api, widgetCrd({ schema }));
  const body = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', labels: { foo: 'bar' }, unspecified: 'x' }, alpha: 'a', beta: 42.0, unspecified: 'y', free: { anything: 1, typed: { a: 'x', b: 'y' } } };
  const warned = await rawRequest(api, 'POST', WIDGETS, { body });
  t.equal(warned.status, 201);
  t.equal(
    warned.headers.warning,
    '299 - "unknown field \\"metadata.unspecified\\"", 299 - "unknown field \\"free.typed.b\\"", 299 - "unknown field \\"unspecified\\""',
    'no fieldValidation: Warn, kube-apiserver\'s default (ObjectMeta\'s first, then the pruned paths sorted)',
  );
  const stored = api.store.get('widgets.example.com', 'default', 'w')!;
  t.same(
    { alpha: stored.alpha, beta: stored.beta, unspecified: stored.unspecified, free: stored.free, metadata: { labels: stored.metadata?.labels, unspecified: stored.metadata?.unspecified } },
    { alpha: 'a', beta: 42, unspecified: undefined, free: { anything: 1, typed: { a: 'x' } }, metadata: { labels: { foo: 'bar' }, unspecified: undefined } },
  );
  const strict = await rawRequest(api, 'POST', `${WIDGETS}?fieldValidation=Strict`, { body: { ...body, metadata: { name: 'w2' } } });
  t.equal(strict.status, 400);
  t.equal(statusOf(strict).message, 'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "free.typed.b", unknown field "unspecified"');
  const ignored = await rawRequest(api, 'POST', `${WIDGETS}?fieldValidation=Ignore`, { body: { ...body, metadata: { name: 'w3' } } });
  t.equal(ignored.status, 201);
  t.equal(ignored.headers.warning, undefined, 'Ignore: pruned without a word');
  t.equal((ignored.json as KubeObject).unspecified, undefined);
});

t.test('defaults from the schema; nulls the schema does not allow are dropped', async (t) => {
  const api = await double(t);
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: { replicas: { type: 'integer', default: 1 }, mode: { type: 'string', default: 'audit' }, note: { type: 'string' }, maybe: { type: 'string', nullable: true } },
      },
    },
  };
  await install(t, api, widgetCrd({ schema }));
  const empty = await rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a' } } });
  t.same((empty.json as KubeObject).spec, { replicas: 1, mode: 'audit' }, 'spec defaulted to {}, then its fields');
  const partial = await rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'b' }, spec: { replicas: 3, mode: null, note: null, maybe: null } } });
  t.same((partial.json as KubeObject).spec, { replicas: 3, mode: 'audit', maybe: null }, 'null and not nullable: defaulted, or dropped without a default; nullable: kept');
});

t.test('the status subresource: status ignored on create and update, written only through /status; generation follows the rest', async (t) => {
  const api = await double(t);
  const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } }, status: { type: 'object', properties: { ready: { type: 'boolean' } } } } };
  await install(t, api, widgetCrd({ schema, subresources: { status: {} } }));
  const created = (await rawRequest(api, 'POST', WIDGETS, { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 }, status: { ready: true } } })).json as KubeObject;
  t.equal(created.status, undefined, 'PrepareForCreate drops status');
  const statusWrite = await rawRequest(api, 'PUT', `${WIDGETS}/w/status`, { body: { ...created, spec: { size: 9 }, status: { ready: true } } });
  t.equal(statusWrite.status, 200, statusWrite.text);
  const afterStatus = statusWrite.json as KubeObject;
  t.same({ spec: afterStatus.spec, status: afterStatus.status, generation: afterStatus.metadata?.generation }, { spec: { size: 1 }, status: { ready: true }, generation: 1 }, '/status changes status only, no new generation');
  const mainWrite = (await rawRequest(api, 'PUT', `${WIDGETS}/w`, { body: { ...afterStatus, spec: { size: 2 }, status: { ready: false } } })).json as KubeObject;
  t.same({ spec: mainWrite.spec, status: mainWrite.status, generation: mainWrite.metadata?.generation }, { spec: { size: 2 }, status: { ready: true }, generation: 2 }, 'the main resource keeps the stored status');
  const unknownStatus = await rawRequest(api, 'PATCH', `${WIDGETS}/w/status?fieldValidation=Strict`, { body: { status: { ready: 'yes' } }, contentType: 'application/merge-patch+json' });
  t.same(causes(unknownStatus), ['status.ready: Invalid value: "string": status.ready in body must be of type boolean: "string"']);
});

t.test('kubectl get\'s Table: the version\'s additionalPrinterColumns after Name, priority kept', async (t) => {
  const api = await double(t);
  await install(t, api, await shippedCrd(REPORT_CRDS.reports));
  await rawRequest(api, 'POST', REPORTS, { body: report('r1', { scope: { kind: 'Deployment', name: 'web' }, summary: { pass: 3, fail: 1, warn: 0, error: 0, skip: 2 } }) });
  const reply = await rawRequest(api, 'GET', REPORTS, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
  const body = reply.json as { columnDefinitions: { name: string; type: string; priority: number }[]; rows: { cells: unknown[] }[] };
  t.same(body.columnDefinitions.map((c) => [c.name, c.type, c.priority]), [
    ['Name', 'string', 0], ['Kind', 'string', 1], ['Name', 'string', 1], ['Pass', 'integer', 0], ['Fail', 'integer', 0], ['Warn', 'integer', 0], ['Error', 'integer', 0], ['Skip', 'integer', 0], ['Age', 'date', 0],
  ]);
  t.match(body.rows[0]?.cells, ['r1', 'Deployment', 'web', 3, 1, 0, 0, 2, /^\d+s$/]);
});

t.test('versions: stored in the storage version, served in each (conversion None), a deprecated one warns', async (t) => {
  const api = await double(t);
  await install(t, api, await shippedCrd(REPORT_CRDS.policyReports));
  const base = (version: string) => `/apis/wgpolicyk8s.io/${version}/namespaces/default/policyreports`;
  const created = await rawRequest(api, 'POST', base('v1alpha2'), { body: { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'PolicyReport', metadata: { name: 'p' }, summary: { fail: 1 } } });
  t.equal(created.status, 201, created.text);
  t.equal((created.json as KubeObject).apiVersion, 'wgpolicyk8s.io/v1alpha2', 'answered in the version asked');
  t.equal(api.store.get('policyreports.wgpolicyk8s.io', 'default', 'p')?.apiVersion, 'wgpolicyk8s.io/v1beta1', 'stored in the storage version');
  for (const version of ['v1alpha1', 'v1alpha2', 'v1beta1']) {
    const read = (await rawRequest(api, 'GET', `${base(version)}/p`)).json as KubeObject;
    t.same([read.apiVersion, read.summary], [`wgpolicyk8s.io/${version}`, { fail: 1 }], `read as ${version}`);
  }
  const patched = await rawRequest(api, 'PATCH', `${base('v1alpha2')}/p`, { body: { summary: { fail: 0, pass: 1 } }, contentType: 'application/merge-patch+json' });
  t.equal(patched.status, 200, patched.text);
  t.equal((patched.json as KubeObject).apiVersion, 'wgpolicyk8s.io/v1alpha2');

  const deprecated = widgetCrd({
    versions: [
      { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: { type: 'object' } } },
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string' } } } } },
    ],
  });
  await install(t, api, deprecated);
  const old = await rawRequest(api, 'GET', '/apis/example.com/v1beta1/widgets');
  t.equal(old.headers.warning, '299 - "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"', 'defaultDeprecationWarning');
  t.equal((await rawRequest(api, 'GET', '/apis/example.com/v1/widgets')).headers.warning, undefined);
});

t.test('limits: a body over 3 MiB is a 413; a custom resource over etcd\'s 1.5 MiB a 500 from etcd; annotations over 256 KiB a 422', async (t) => {
  const api = await double(t);
  await install(t, api, widgetCrd());
  const sized = (name: string, bytes: number) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, data: 'x'.repeat(bytes) });
  const huge = await rawRequest(api, 'POST', WIDGETS, { body: sized('huge', 3 * 1024 * 1024) });
  t.equal(huge.status, 413);
  t.same(statusOf(huge), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request entity too large: limit is 3145728', reason: 'RequestEntityTooLarge', code: 413 });
  const large = await rawRequest(api, 'POST', WIDGETS, { body: sized('large', 2 * 1024 * 1024) });
  t.equal(large.status, 500);
  t.same(statusOf(large), { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500 });
  t.equal(api.store.get('widgets.example.com', 'default', 'large'), undefined, 'nothing stored');
  t.equal((await rawRequest(api, 'POST', WIDGETS, { body: sized('fits', 1024 * 1024) })).status, 201, '1 MiB fits');
  const annotated = await rawRequest(api, 'POST', WIDGETS, { body: { ...sized('annotated', 0), metadata: { name: 'annotated', annotations: { big: 'y'.repeat(256 * 1024) } } } });
  t.same(causes(annotated), ['metadata.annotations: Too long: may not be more than 262144 bytes']);
});

t.test('deleting a CRD: Terminating, its objects deleted (a finalizer holds it), creates refused, then it goes', async (t) => {
  const api = await double(t, { finalizers: true });
  await install(t, api, await shippedCrd(REPORT_CRDS.reports));
  await rawRequest(api, 'POST', REPORTS, { body: report('plain') });
  await rawRequest(api, 'POST', REPORTS, { body: report('held', { metadata: { name: 'held', finalizers: ['example.com/hold'] } }) });
  const deleted = await rawRequest(api, 'DELETE', `${CRDS_PATH}/reports.openreports.io`);
  t.equal(deleted.status, 200);
  t.same((deleted.json as KubeObject).metadata?.finalizers, ['customresourcecleanup.apiextensions.k8s.io'], 'the finalizer added at the first delete');
  const terminating = await api.store.waitFor('customresourcedefinitions', undefined, 'reports.openreports.io', (o) => (o?.status as { conditions?: { type: string; status: string }[] })?.conditions?.some((c) => c.type === 'Terminating' && c.status === 'True') ?? false, { timeoutMs: 5000 });
  t.has((terminating?.status as { conditions: unknown[] }).conditions, [{}, {}, { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }]);
  await api.store.waitFor('reports.openreports.io', 'default', 'plain', (o) => o === undefined, { timeoutMs: 5000 });
  t.ok(api.store.get('reports.openreports.io', 'default', 'held')?.metadata?.deletionTimestamp, 'the held object is marked, not gone');
  const refused = await rawRequest(api, 'POST', REPORTS, { body: report('late') });
  t.same(statusOf(refused), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
    message: 'reports.openreports.io "late" is forbidden: create not allowed while custom resource definition is terminating',
    reason: 'Forbidden', details: { name: 'late', group: 'openreports.io', kind: 'reports' }, code: 403,
  });
  const held = api.store.get('reports.openreports.io', 'default', 'held')!;
  const released = await rawRequest(api, 'PUT', `${REPORTS}/held`, { body: { ...held, metadata: { ...held.metadata, finalizers: [] } } });
  t.equal(released.status, 200, released.text);
  // The finalizer polls every 5 s (deleteInstances), as kube-apiserver's does.
  await api.store.waitFor('customresourcedefinitions', undefined, 'reports.openreports.io', (o) => o === undefined, { timeoutMs: 15_000 });
  t.equal((await rawRequest(api, 'GET', REPORTS)).status, 404, 'the resource is gone');
  t.notOk(api.store.types.has('reports.openreports.io'));
});

interface WatchClient {
  /** The HTTP status the watch was answered with. */
  status: number;
  /** The kube-apiserver that served it. */
  apiserver: string;
  events: { type: string; object: KubeObject }[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** A watch on a new connection (so on the next kube-apiserver, round robin), read line by line. */
async function openWatch(api: FakeApiServer, path: string): Promise<WatchClient> {
  const before = api.requests.length;
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, api.url), { ca: api.caPem, headers: { Authorization: `Bearer ${api.token}` }, agent: false, signal: AbortSignal.timeout(60_000) }, (res) => {
      const events: WatchClient['events'] = [];
      let buffer = '';
      const ended = new Promise<void>((done) => res.on('end', done).on('close', done));
      res.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
          if (res.statusCode === 200) events.push(JSON.parse(buffer.slice(0, newline)) as WatchClient['events'][number]);
          buffer = buffer.slice(newline + 1);
        }
      });
      const served = api.requests.slice(before).find((r) => r.path === path);
      resolve({ status: res.statusCode ?? 0, apiserver: served?.apiserver ?? '', events, ended, close: () => req.destroy() });
    });
    req.on('error', (error) => (error.name === 'AbortError' ? undefined : reject(error)));
    req.end();
  });
}

/** Opens watches on new connections until one lands on each kube-apiserver named (round robin: a few tries). */
async function watchEach(t: Test, api: FakeApiServer, path: string, names: readonly string[]): Promise<Map<string, WatchClient>> {
  const byServer = new Map<string, WatchClient>();
  for (let tries = 0; byServer.size < names.length && tries < names.length * 3; tries++) {
    const watch = await openWatch(api, path);
    t.teardown(() => watch.close());
    if (names.includes(watch.apiserver) && !byServer.has(watch.apiserver)) byServer.set(watch.apiserver, watch);
    else watch.close();
  }
  t.same([...byServer.keys()].sort(), [...names].sort(), 'a watch on each kube-apiserver');
  return byServer;
}

/** Resolves once `done` holds for the watch's events; rejects after `timeoutMs`. */
async function until(watch: WatchClient, done: (events: WatchClient['events']) => boolean, timeoutMs: number): Promise<void> {
  const started = performance.now();
  while (!done(watch.events)) {
    if (performance.now() - started > timeoutMs) throw new Error(`${watch.apiserver}: ${JSON.stringify(watch.events.map((e) => e.type))} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('several kube-apiservers: each serves the CRD from its own cache, so a lagging one 404s until its lag has passed; watches through each', async (t) => {
  const LAG_MS = 1500;
  const api = await double(t, { apiservers: [{}, {}, { lagMs: LAG_MS }] });
  const all = ['kube-apiserver-0', 'kube-apiserver-1', 'kube-apiserver-2'];
  const list = '/apis/openreports.io/v1alpha1/reports';
  const watchPath = `${list}?watch=true`;
  await install(t, api, await shippedCrd(REPORT_CRDS.reports));
  const lagging = api.apiservers[2]!;
  t.ok(lagging.backlog > 0, 'the lagging kube-apiserver has not seen the CRD yet');
  t.equal((await api.request(ADMIN_USER, { method: 'GET', path: list }, 0)).status, 200, 'served at once where there is no lag');
  t.equal((await api.request(ADMIN_USER, { method: 'GET', path: list }, 2)).status, 404, 'the lagging one does not serve it yet');
  const early = await watchEach(t, api, watchPath, all);
  t.equal(early.get('kube-apiserver-2')?.status, 404, 'a watch there is refused too');
  t.same([early.get('kube-apiserver-0')?.status, early.get('kube-apiserver-1')?.status], [200, 200]);

  await caughtUp(lagging, LAG_MS * 4);
  t.equal((await api.request(ADMIN_USER, { method: 'GET', path: list }, 2)).status, 200, 'served once its cache holds the CRD');
  const watches = new Map([...early].filter(([, w]) => w.status === 200));
  for (const [name, watch] of await watchEach(t, api, watchPath, ['kube-apiserver-2'])) watches.set(name, watch);

  t.equal((await rawRequest(api, 'POST', REPORTS, { body: report('seen') })).status, 201);
  for (const [name, watch] of watches) {
    await until(watch, (events) => events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'seen'), 5000);
    t.equal(watch.events.find((e) => e.type === 'ADDED')?.object.apiVersion, 'openreports.io/v1alpha1', `${name} sent the object in the watched version`);
  }

  // Deleting the CRD deletes the object, then ends each watch when the CRD's removal reaches that kube-apiserver.
  t.equal((await rawRequest(api, 'DELETE', `${CRDS_PATH}/reports.openreports.io`)).status, 200);
  await api.store.waitFor('customresourcedefinitions', undefined, 'reports.openreports.io', (o) => o === undefined, { timeoutMs: 5000 });
  const gone = performance.now();
  for (const [name, watch] of watches) {
    await Promise.race([watch.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`${name}'s watch still open`)), LAG_MS * 4))]);
    t.ok(watch.events.some((e) => e.type === 'DELETED' && e.object.metadata?.name === 'seen'), `${name} sent the object's deletion before ending`);
  }
  t.ok(performance.now() - gone >= LAG_MS * 0.5, 'the lagging one ended its watch only after its lag');
});
