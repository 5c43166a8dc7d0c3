/**
 * Reviews for a webhook this replica does not serve (replicas on different policy versions):
 * allowed with a short warning, logged and counted, never a failed call; everything that is not
 * a well-formed review for a possible webhook name keeps its 4xx.
 */
import t from 'tap';
import { createTestCa, podReview, request, serve, validating, mutating, type ReviewResponse } from './support/server/server-harness.js';

const ca = createTestCa();
let handled = 0;
const served = await serve(
  [
    validating('allow', () => {
      handled++;
      return { allowed: true };
    }),
    mutating('add-label', (r) => {
      handled++;
      return { allowed: true, object: { ...r.object, metadata: { ...r.object?.metadata, labels: { added: 'yes' } } } };
    }),
  ],
  { ca },
);
t.teardown(() => served.server.close(2000));

const post = (path: string, body: unknown, raw?: string) => request(served.port, path, body, { ca: ca.certPem, ...(raw === undefined ? {} : { raw }) });
const errorOf = (result: { json: unknown }): string => (result.json as { error?: string } | undefined)?.error ?? '';
const metrics = (): Promise<string> => served.metricsRegistry.metrics();

t.test('a well-formed v1 review for an unknown validating webhook is allowed with a warning', async (t) => {
  const review = podReview();
  const uid = (review['request'] as { uid: string }).uid;
  const logsBefore = served.logs.lines.length;
  const result = await post('/validate/require-team?timeout=10s', review);
  t.equal(result.status, 200, 'a 200: kube-apiserver sees a successful call');
  const body = result.json as ReviewResponse;
  t.equal(body.apiVersion, 'admission.k8s.io/v1');
  t.equal(body.kind, 'AdmissionReview');
  t.same(body.response, { uid, allowed: true, warnings: ['this replica does not serve "require-team" (yet or any more); allowed'] }, 'no patch, no status');
  t.equal(handled, 0, 'no handler ran');
  const line = served.logs.lines.slice(logsBefore).find((l) => l['msg'] === 'review for a webhook this replica does not serve (yet or any more): allowed with a warning');
  t.match(line, { level: 40, uid, type: 'validating', webhook: 'require-team', kind: 'Pod', namespace: 'team-a', object: 'web', operation: 'CREATE' }, 'a warn line');
  t.match(await metrics(), /kube_admission_unknown_webhook_total\{type="validating",webhook="require-team"\} 1/);
});

t.test('v1beta1 is echoed, and an unknown mutating webhook sends no patch', async (t) => {
  const result = await post('/mutate/inject-sidecar', podReview({ apiVersion: 'admission.k8s.io/v1beta1' }));
  t.equal(result.status, 200);
  const body = result.json as ReviewResponse;
  t.equal(body.apiVersion, 'admission.k8s.io/v1beta1');
  t.equal(body.response.allowed, true);
  t.equal(body.response.patch, undefined);
  t.equal(body.response.patchType, undefined);
  t.same(body.response.warnings, ['this replica does not serve "inject-sidecar" (yet or any more); allowed']);
  t.match(await metrics(), /kube_admission_unknown_webhook_total\{type="mutating",webhook="inject-sidecar"\} 1/);
});

t.test('a webhook served only as the other type counts as unknown for this type', async (t) => {
  const result = await post('/mutate/allow', podReview());
  t.equal(result.status, 200);
  t.same((result.json as ReviewResponse).response.warnings, ['this replica does not serve "allow" (yet or any more); allowed']);
  t.equal(handled, 0, 'the validating "allow" handler did not run');
});

t.test('the warning stays within 120 characters for the longest valid name', async (t) => {
  const longest = 'a'.repeat(61) + '-b';
  t.equal(longest.length, 63);
  const result = await post(`/validate/${longest}`, podReview());
  const warning = (result.json as ReviewResponse).response.warnings?.[0] ?? '';
  t.ok(Array.from(warning).length <= 120, `${Array.from(warning).length} characters`);
  t.ok(warning.includes(`"${longest}"`), 'names the whole webhook');
});

t.test('a malformed body for an unknown webhook is still a 400 with a reason', async (t) => {
  const invalidJson = await post('/validate/require-team', undefined, '{"apiVersion":');
  t.equal(invalidJson.status, 400);
  t.match(errorOf(invalidJson), /body is not valid JSON/);
  const noUid = await post('/validate/require-team', { ...podReview(), request: { ...(podReview()['request'] as object), uid: '' } });
  t.equal(noUid.status, 400);
  t.match(errorOf(noUid), /request.uid is missing or empty/);
  const notReview = await post('/mutate/require-team', { apiVersion: 'v1', kind: 'Pod' });
  t.equal(notReview.status, 400);
  t.match(errorOf(notReview), /unsupported apiVersion "v1"/);
  t.match(await metrics(), /kube_admission_requests_total\{webhook="_unserved",operation="",decision="invalid"\} 2/, 'counted as invalid (bad JSON is refused before the route, like for served webhooks)');
});

t.test('names that are no DNS-1123 label, and paths outside /validate/ and /mutate/, stay 404', async (t) => {
  for (const path of ['/validate/', '/validate/Require_Team', '/validate/a.b', '/mutate/-x', `/validate/${'a'.repeat(64)}`, '/validate/caf%C3%A9']) {
    const result = await post(path, podReview());
    t.equal(result.status, 404, path);
    t.match(errorOf(result), /webhook names are DNS-1123 labels/, `${path}: says why`);
  }
  for (const path of ['/validate', '/admit', '/validate/a/b', '/webhooks/validate/a']) {
    const result = await post(path, podReview());
    t.equal(result.status, 404, path);
    t.match(errorOf(result), /no route for POST/, `${path}: says why`);
  }
  t.notMatch(await metrics(), /webhook="Require_Team"|webhook="a\.b"/, 'invalid names never become metric labels');
});

t.test('the metric keeps a bounded label set: names past the cap are counted as _other', async (t) => {
  const bounded = await serve([], { ca });
  t.teardown(() => bounded.server.close(2000));
  for (let i = 0; i < 40; i++) {
    const result = await request(bounded.port, `/validate/invented-${i}`, podReview(), { ca: ca.certPem });
    t.equal(result.status, 200);
  }
  await request(bounded.port, '/validate/invented-0', podReview(), { ca: ca.certPem });
  const text = await bounded.metricsRegistry.metrics();
  const series = text.split('\n').filter((line) => line.startsWith('kube_admission_unknown_webhook_total{'));
  t.equal(series.length, 33, '32 names plus _other');
  t.match(text, /kube_admission_unknown_webhook_total\{type="validating",webhook="invented-0"\} 2/, 'a name already counted keeps its series');
  t.match(text, /kube_admission_unknown_webhook_total\{type="validating",webhook="_other"\} 8/);
  const mutatingResult = await request(bounded.port, '/mutate/invented-39', podReview(), { ca: ca.certPem });
  t.equal(mutatingResult.status, 200);
  t.match(await bounded.metricsRegistry.metrics(), /kube_admission_unknown_webhook_total\{type="mutating",webhook="invented-39"\} 1/, 'each type has its own cap');
});

t.test('served webhooks are unaffected', async (t) => {
  const result = await post('/mutate/add-label', podReview());
  t.equal(result.status, 200);
  const body = result.json as ReviewResponse;
  t.equal(body.response.patchType, 'JSONPatch');
  t.equal(body.response.warnings, undefined);
});
