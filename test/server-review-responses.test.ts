import t from 'tap';
import type { AdmissionContext, AdmissionRequest } from '../src/admission/types.js';
import {
  createTestCa,
  decodePatch,
  mutating,
  podReview,
  request,
  serve,
  validating,
  type ReviewResponse,
} from './support/server/server-harness.js';

const ca = createTestCa();
const seen: { request: AdmissionRequest; context: AdmissionContext }[] = [];

const webhooks = [
  validating('allow-all', (req, context) => {
    seen.push({ request: req, context });
    return { allowed: true };
  }),
  validating('deny-all', () => ({ allowed: false, message: 'pods need an owner label', warnings: ['w1'] })),
  validating('deny-low-code', () => ({ allowed: false, message: 'teapot', code: 200, reason: 'Teapot' })),
  validating('deny-422', () => ({ allowed: false, message: 'bad field', code: 422, reason: 'Invalid' })),
  // A validating handler that (wrongly) returns an object must never produce a patch.
  validating('returns-object', (req) => ({ allowed: true, object: { ...req.object, metadata: { name: 'x' } } }) as never),
  validating('warns', () => ({
    allowed: true,
    warnings: ['same', 'same', 'x'.repeat(300), '', 'line one\n\tline two', 'other'],
    auditAnnotations: { 'rule-a': 'matched', 'bad/key': 'x', '-bad': 'y', ['k'.repeat(64)]: 'z', ok_key: 'v' },
  })),
  mutating('add-label', (req) => {
    const object = structuredClone(req.object ?? {});
    object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, team: 'a' } };
    return { allowed: true, object };
  }),
  mutating('in-place', (req) => {
    if (req.object?.metadata) req.object.metadata.labels = { ...req.object.metadata.labels, edited: 'yes' };
    return { allowed: true, object: req.object ?? {} };
  }),
  mutating('annotate-unicode', (req) => {
    const object = structuredClone(req.object ?? {});
    object.metadata = { ...object.metadata, annotations: { 'example.com/owner': 'Zoë 日本 🚀', 'example.com/latin1': 'café\u00ff' } };
    return { allowed: true, object };
  }),
  mutating('no-change', (req) => ({ allowed: true, object: structuredClone(req.object ?? {}) })),
  mutating('mutate-deny', () => ({ allowed: false, message: 'no' })),
];

const served = await serve(webhooks, { ca });
t.teardown(() => served.server.close(2000));

async function review(path: string, body: Record<string, unknown>) {
  const result = await request(served.port, path, body, { ca: ca.certPem });
  return { ...result, review: result.json as ReviewResponse };
}

function uidOf(body: Record<string, unknown>): string {
  return (body.request as { uid: string }).uid;
}

for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
  t.test(`allow in ${apiVersion}: uid, apiVersion and kind echoed`, async (t) => {
    const body = podReview({ apiVersion });
    const { status, review: r, headers } = await review('/validate/allow-all', body);
    t.equal(status, 200);
    t.match(headers['content-type'], /^application\/json/);
    t.equal(r.apiVersion, apiVersion);
    t.equal(r.kind, 'AdmissionReview');
    t.equal(r.response.uid, uidOf(body));
    t.equal(r.response.allowed, true);
    t.notOk('patch' in r.response);
    t.notOk('patchType' in r.response);
    t.notOk('status' in r.response);
  });

  t.test(`mutation in ${apiVersion}: base64 JSON patch with patchType`, async (t) => {
    const body = podReview({ apiVersion });
    const { status, review: r } = await review('/mutate/add-label', body);
    t.equal(status, 200);
    t.equal(r.apiVersion, apiVersion);
    t.equal(r.response.uid, uidOf(body));
    t.equal(r.response.patchType, 'JSONPatch');
    t.match(r.response.patch, /^[A-Za-z0-9+/]+=*$/, 'standard base64');
    t.same(decodePatch(r.response.patch), [{ op: 'add', path: '/metadata/labels/team', value: 'a' }]);
  });
}

t.test('a patch carrying characters beyond ASCII is the UTF-8 of its JSON in base64', async (t) => {
  const { review: r } = await review('/mutate/annotate-unicode', podReview());
  const expected = [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/owner': 'Zoë 日本 🚀', 'example.com/latin1': 'café\u00ff' } }];
  t.same(decodePatch(r.response.patch), expected);
  t.equal(r.response.patch, Buffer.from(JSON.stringify(expected), 'utf8').toString('base64'), 'the bytes kube-apiserver decodes, as node:buffer encodes them');
});

t.test('denial is HTTP 200 with allowed:false and a 403 status by default', async (t) => {
  const body = podReview();
  const { status, review: r } = await review('/validate/deny-all', body);
  t.equal(status, 200);
  t.equal(r.response.uid, uidOf(body));
  t.equal(r.response.allowed, false);
  t.same(r.response.status, { code: 403, message: 'pods need an owner label', status: 'Failure' });
  t.same(r.response.warnings, ['w1'], 'warnings travel with denials too');
});

t.test('denial codes below 400 are raised to 400; others and reasons pass through', async (t) => {
  const low = await review('/validate/deny-low-code', podReview());
  t.same(low.review.response.status, { code: 400, message: 'teapot', reason: 'Teapot', status: 'Failure' });
  const invalid = await review('/validate/deny-422', podReview());
  t.equal(invalid.review.response.status?.code, 422);
  t.equal(invalid.review.response.status?.reason, 'Invalid');
});

t.test('a validating webhook never returns a patch, even when its handler returns an object', async (t) => {
  const { review: r } = await review('/validate/returns-object', podReview());
  t.equal(r.response.allowed, true);
  t.notOk('patch' in r.response);
  t.notOk('patchType' in r.response);
});

t.test('no change -> no patch fields at all', async (t) => {
  const { review: r } = await review('/mutate/no-change', podReview());
  t.equal(r.response.allowed, true);
  t.notOk('patch' in r.response);
  t.notOk('patchType' in r.response);
});

t.test('a handler editing request.object in place still yields its patch', async (t) => {
  const { review: r } = await review('/mutate/in-place', podReview());
  t.same(decodePatch(r.response.patch), [{ op: 'add', path: '/metadata/labels/edited', value: 'yes' }]);
});

t.test('never a patch on DELETE', async (t) => {
  const body = podReview({ operation: 'DELETE' });
  const { status, review: r } = await review('/mutate/add-label', body);
  t.equal(status, 200);
  t.equal(r.response.uid, uidOf(body));
  t.equal(r.response.allowed, true);
  t.notOk('patch' in r.response);
  t.notOk('patchType' in r.response);
});

t.test('a mutating webhook may deny, without a patch', async (t) => {
  const { review: r } = await review('/mutate/mutate-deny', podReview());
  t.equal(r.response.allowed, false);
  t.equal(r.response.status?.code, 403);
  t.notOk('patch' in r.response);
});

t.test('warnings deduplicated, never cut where kube-apiserver does not cut, control characters cleaned; invalid audit keys dropped and logged', async (t) => {
  const body = podReview();
  const { review: r } = await review('/validate/warns', body);
  const warnings = r.response.warnings ?? [];
  t.same(warnings, ['same', 'x'.repeat(300), 'line one line two', 'other']);
  t.same(r.response.auditAnnotations, { 'rule-a': 'matched', ok_key: 'v' });
  const dropped = served.logs.lines.find((line) => line.uid === uidOf(body) && Array.isArray(line.keys));
  t.same(dropped?.keys, ['bad/key', '-bad', 'k'.repeat(64)]);
});

t.test('dryRun and an AbortSignal reach the handler', async (t) => {
  seen.length = 0;
  await review('/validate/allow-all', podReview({ dryRun: true }));
  await review('/validate/allow-all', podReview({ dryRun: false }));
  t.equal(seen.length, 2);
  t.equal(seen[0]?.context.dryRun, true);
  t.equal(seen[0]?.request.dryRun, true);
  t.equal(seen[1]?.context.dryRun, false);
  t.type(seen[0]?.context.signal, AbortSignal);
  t.equal(seen[0]?.context.signal.aborted, false);
  t.equal(seen[0]?.context.webhook.name, 'allow-all');
});

t.test('one line per review with the fields, never the object (an allowed one at debug)', async (t) => {
  const body = podReview();
  await review('/mutate/add-label', body);
  const lines = served.logs.lines.filter((line) => line.uid === uidOf(body));
  t.equal(lines.length, 1);
  const line = lines[0] ?? {};
  t.equal(line.level, 20);
  t.match(line, {
    kind: 'Pod',
    namespace: 'team-a',
    object: 'web',
    operation: 'CREATE',
    webhook: 'add-label',
    decision: 'allowed',
  });
  t.type(line.ms, 'number');
  t.notOk(JSON.stringify(line).includes('nginx'), 'no part of the object is logged');
});

t.test('metrics count reviews by webhook, operation and decision', async (t) => {
  await review('/validate/deny-all', podReview({ operation: 'UPDATE' }));
  const text = await served.metricsRegistry.metrics();
  t.match(text, /kube_admission_requests_total\{webhook="deny-all",operation="UPDATE",decision="denied"\} 1/);
  t.match(text, /kube_admission_request_duration_seconds_bucket\{le="0\.001",webhook="allow-all"\}/);
  t.match(text, /kube_admission_requests_in_flight 0/);
});

t.test('the registry is read per request: a replaced set takes effect at once', async (t) => {
  const before = await review('/validate/late', podReview());
  t.equal(before.status, 200);
  t.same(before.review.response.warnings, ['this replica does not serve "late" (yet or any more); allowed'], 'not served yet: allowed with a warning');
  served.registry.replace([...webhooks, validating('late', () => ({ allowed: false, message: 'late rule' }))]);
  const after = await review('/validate/late', podReview());
  t.equal(after.status, 200);
  t.equal(after.review.response.status?.message, 'late rule');
});
