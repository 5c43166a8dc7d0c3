import t, { type Test } from 'tap';
import { createTestCa, podReview, request, serve, validating, type ReviewResponse } from './support/server/server-harness.js';

const ca = createTestCa();
let handled = 0;
const served = await serve(
  [
    validating('allow', () => {
      handled++;
      return { allowed: true };
    }),
  ],
  { ca },
);
t.teardown(() => served.server.close(2000));

const post = (path: string, body: unknown, options: Parameters<typeof request>[3] | object = {}) =>
  request(served.port, path, body, { ca: ca.certPem, ...options });

function errorOf(result: { json: unknown }): string {
  return (result.json as { error?: string } | undefined)?.error ?? '';
}

/** After every bad request the server must still answer a good one. */
async function stillServing(t: Test): Promise<void> {
  const good = await post('/validate/allow', podReview());
  t.equal(good.status, 200, 'still serving');
  t.equal((good.json as ReviewResponse).response.allowed, true);
}

interface Case {
  name: string;
  path?: string;
  method?: string;
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  message: RegExp;
}

const cases: Case[] = [
  { name: 'GET on a webhook path', method: 'GET', status: 405, message: /method GET is not allowed: webhooks take POST/ },
  { name: 'PUT on a webhook path', method: 'PUT', body: podReview(), status: 405, message: /method PUT is not allowed/ },
  { name: 'unknown path', path: '/admit', body: podReview(), status: 404, message: /no route for POST \/admit/ },
  { name: 'nested path', path: '/validate/allow/extra', body: podReview(), status: 404, message: /no route/ },
  { name: 'a path segment that is no webhook name', path: '/validate/No_Pe', body: podReview(), status: 404, message: /no validating webhook "No_Pe": webhook names are DNS-1123 labels/ },
  {
    name: 'text/plain body',
    raw: JSON.stringify(podReview()),
    headers: { 'content-type': 'text/plain' },
    status: 415,
    message: /Content-Type must be application\/json, got "text\/plain"/,
  },
  {
    name: 'application/yaml body',
    raw: 'apiVersion: x',
    headers: { 'content-type': 'application/yaml' },
    status: 415,
    message: /Content-Type must be application\/json/,
  },
  { name: 'invalid JSON', raw: '{"apiVersion":', status: 400, message: /body is not valid JSON/ },
  { name: 'empty body', raw: '', status: 400, message: /body is empty: an AdmissionReview is expected/ },
  { name: 'JSON array', raw: '[1,2]', status: 400, message: /body must be a JSON object \(an AdmissionReview\)/ },
  {
    name: 'not an AdmissionReview',
    body: { apiVersion: 'v1', kind: 'Pod' },
    status: 400,
    message: /unsupported apiVersion "v1": expected "admission.k8s.io\/v1" or "admission.k8s.io\/v1beta1"/,
  },
  {
    name: 'unknown review apiVersion',
    body: { ...podReview(), apiVersion: 'admission.k8s.io/v2' },
    status: 400,
    message: /unsupported apiVersion "admission.k8s.io\/v2"/,
  },
  { name: 'wrong kind', body: { ...podReview(), kind: 'Review' }, status: 400, message: /kind must be "AdmissionReview", got "Review"/ },
  { name: 'missing request', body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, status: 400, message: /AdmissionReview has no request/ },
  {
    name: 'missing uid',
    body: { ...podReview(), request: { ...(podReview().request as object), uid: undefined } },
    status: 400,
    message: /request.uid is missing or empty/,
  },
  {
    name: 'bad operation',
    body: { ...podReview(), request: { ...(podReview().request as object), operation: 'PATCH' } },
    status: 400,
    message: /request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, got "PATCH"/,
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const before = handled;
    const logLines = served.logs.lines.length;
    const result = await post(c.path ?? '/validate/allow', c.body, { method: c.method, raw: c.raw, headers: c.headers });
    t.equal(result.status, c.status);
    t.match(errorOf(result), c.message);
    t.match(result.headers['content-type'], /^application\/json/);
    t.equal(handled, before, 'the handler never ran');
    t.ok(served.logs.lines.length > logLines, 'a log line was written');
    t.equal(served.logs.lines.at(-1)?.level, 40, 'at warn level');
    await stillServing(t);
  });
}

t.test('JSON with a charset is accepted', async (t) => {
  const result = await post('/validate/allow', podReview(), { headers: { 'content-type': 'application/json; charset=utf-8' } });
  t.equal(result.status, 200);
});

t.test('a body over 7 MiB is refused with 413', async (t) => {
  const big = Buffer.alloc(7 * 1024 * 1024 + 10, 0x20);
  const outcome = await post('/validate/allow', undefined, { raw: big }).then(
    (result) => ({ status: result.status, error: errorOf(result) }),
    (error: Error) => ({ status: 0, error: error.message }),
  );
  // Decided from Content-Length and answered early; a client still writing may see a reset, which HTTP allows and Go's client copes with.
  if (outcome.status === 0) t.match(outcome.error, /ECONNRESET|EPIPE|socket hang up/);
  else {
    t.equal(outcome.status, 413);
    t.match(outcome.error, /body is larger than the 7 MiB limit/);
  }
  const line = served.logs.lines.findLast((l) => l.statusCode === 413);
  t.ok(line, 'the 413 was logged');
  await stillServing(t);
});

t.test('a body just under 7 MiB is read and judged as a review', async (t) => {
  const review = podReview();
  (review.request as { object: { padding?: string } }).object.padding = 'x'.repeat(6 * 1024 * 1024);
  const result = await post('/validate/allow', review);
  t.equal(result.status, 200);
});

t.test('invalid requests are counted as invalid', async (t) => {
  const text = await served.metricsRegistry.metrics();
  t.match(text, /kube_admission_requests_total\{webhook="allow",operation="",decision="invalid"\} \d+/);
  t.match(text, /kube_admission_requests_total\{webhook="_unserved",operation="",decision="invalid"\} \d+/);
});
