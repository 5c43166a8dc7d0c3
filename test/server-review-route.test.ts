/**
 * One HTTP stack: every call, kube-apiserver's plain ones included, is answered by fastify's
 * review routes. Read from fastify's own `fastify.request.handler` tracing channel: each call
 * reaches a fastify handler (unless fastify's body parser refused it first), and the same call
 * with `Content-Type: application/json; charset=utf-8` gets the same status, headers and body.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { connect, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { groupWebhooks } from '../src/webhooks/grouping.js';
import { webhookPath } from '../src/webhooks/group-path.js';
import { createTestCa, mutating, podReview, request, serve, TEST_SERVER_NAME, validating, type HttpResult } from './support/server/server-harness.js';

const ca = createTestCa();
const webhooks = [
  validating('allow', () => ({ allowed: true })),
  validating('deny', () => ({ allowed: false, message: 'denied here', warnings: ['careful'] })),
  validating('later', async () => {
    await sleep(5);
    return { allowed: true, warnings: ['answered after a while'] };
  }),
  validating('throws', () => {
    throw new Error('handler broke');
  }),
  mutating('add-label', (req) => {
    const object = structuredClone(req.object ?? {});
    object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, team: 'a' } };
    return { allowed: true, object };
  }),
  validating('echo-label', (req) => ({ allowed: true, warnings: [`label: ${req.object?.metadata?.labels?.app ?? '(none)'}`] })),
];
const group = groupWebhooks([webhooks[0]!, webhooks[1]!])[0]!;
const served = await serve(webhooks, { ca, groups: [group] });
t.teardown(() => served.server.close(2000));

let fastifyHandlerCalls = 0;
const countHandlerCall = (): void => {
  fastifyHandlerCalls += 1;
};
const fastifyHandlers = tracingChannel('fastify.request.handler');
const subscribers = { start: countHandlerCall, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
fastifyHandlers.subscribe(subscribers);
t.teardown(() => fastifyHandlers.unsubscribe(subscribers));

const PLAIN = 'application/json';
const VIA_FASTIFY = 'application/json; charset=utf-8';

async function call(path: string, raw: string, contentType: string): Promise<{ result: HttpResult; fastifyHandled: boolean }> {
  const before = fastifyHandlerCalls;
  const result = await request(served.port, path, undefined, { ca: ca.certPem, raw, headers: { 'content-type': contentType } });
  return { result, fastifyHandled: fastifyHandlerCalls > before };
}

function comparable(result: HttpResult): { status: number; headers: Record<string, unknown>; text: string } {
  const { date, ...headers } = result.headers;
  t.ok(date, 'a Date header');
  return { status: result.status, headers, text: result.text };
}

const review = JSON.stringify(podReview({ uid: 'route-1', labels: { app: 'web' } }));
/** `parserError`: fastify answers from its body parser, before any handler (so the channel stays silent). */
const cases: { name: string; path: string; raw: string; status: number; says?: RegExp; parserError?: true }[] = [
  { name: 'an allowed review', path: '/validate/allow', raw: review, status: 200, says: /"uid":"route-1","allowed":true/ },
  { name: 'a denied review with a warning', path: '/validate/deny?timeout=10s', raw: review, status: 200, says: /"allowed":false.*denied here.*careful/ },
  { name: 'an asynchronous handler', path: '/validate/later?timeout=5s', raw: review, status: 200, says: /answered after a while/ },
  { name: 'a handler that throws (its failurePolicy answers)', path: '/validate/throws', raw: review, status: 200 },
  { name: 'a mutation (a patch)', path: '/mutate/add-label?timeout=30s', raw: review, status: 200, says: /"patchType":"JSONPatch"/ },
  { name: 'a grouped webhook', path: webhookPath(group), raw: review, status: 200, says: /"allowed":false.*deny: denied here/ },
  { name: 'a webhook this replica does not serve', path: '/validate/not-here', raw: review, status: 200 },
  { name: 'malformed JSON', path: '/validate/allow', raw: '{"apiVersion":', status: 400, parserError: true },
  { name: 'an empty body', path: '/validate/allow', raw: '', status: 400, parserError: true },
  { name: 'JSON that is no review', path: '/validate/allow', raw: '[1,2]', status: 400 },
  { name: 'a grouped path whose group is no group name', path: '/validate/allow/deny', raw: review, status: 404 },
];

for (const c of cases) {
  t.test(`${c.name}: answered by fastify's review route`, async (t) => {
    const plain = await call(c.path, c.raw, PLAIN);
    const withCharset = await call(c.path, c.raw, VIA_FASTIFY);
    t.equal(plain.fastifyHandled, c.parserError === undefined, "kube-apiserver's plain call reached a fastify handler (unless its body parser refused it)");
    t.equal(withCharset.fastifyHandled, c.parserError === undefined, 'so did the call with a charset');
    t.equal(plain.result.status, c.status);
    if (c.says) t.match(plain.result.text, c.says, 'the answer says what the handler decided');
    t.same(comparable(plain.result), comparable(withCharset.result), 'same status, headers and body');
  });
}

t.test('calls in other shapes are answered by fastify too', async (t) => {
  const declined: { name: string; path: string; headers?: Record<string, string>; method?: string; status: number }[] = [
    { name: 'a percent-encoded path', path: '/validate/al%6Cow', status: 200 },
    { name: 'another query parameter', path: '/validate/allow?timeout=10s&x=1', status: 200 },
    { name: 'a trailing slash', path: '/validate/allow/', status: 404 },
    { name: 'an upper-case name', path: '/validate/Allow', status: 404 },
  ];
  for (const d of declined) {
    const before = fastifyHandlerCalls;
    const result = await request(served.port, d.path, undefined, { ca: ca.certPem, raw: review, method: d.method, headers: { 'content-type': PLAIN, ...d.headers } });
    t.equal(result.status, d.status, `${d.name}: ${result.text}`);
    t.ok(fastifyHandlerCalls > before, `${d.name}: fastify answered`);
  }
  // fastify's not-found handler (which the channel does not trace) is the only source of a 405.
  const put = await request(served.port, '/validate/allow', undefined, { ca: ca.certPem, raw: review, method: 'PUT', headers: { 'content-type': PLAIN } });
  t.equal(put.status, 405, put.text);
});

/** Sends the head, then the body in the given parts, pausing between them; resolves with the raw answer. */
function sendInParts(path: string, parts: Buffer[], framing: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: TLSSocket = connect({ host: '127.0.0.1', port: served.port, servername: TEST_SERVER_NAME, ca: ca.certPem }, async () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\nConnection: close\r\n\r\n`);
      for (const part of parts) {
        socket.write(part);
        await sleep(20);
      }
    });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

t.test('a body arriving in parts, a character split between them, is read whole', async (t) => {
  const body = Buffer.from(JSON.stringify(podReview({ uid: 'route-2', labels: { app: 'zoë-日本-🚀' } })));
  const inside = body.indexOf(Buffer.from('🚀')) + 2;
  const answer = await sendInParts('/validate/echo-label', [body.subarray(0, inside), body.subarray(inside)], `Content-Length: ${body.length}`);
  t.match(answer, /^HTTP\/1\.1 200 /);
  t.match(answer, /"warnings":\["label: zoë-日本-🚀"\]/);
});

t.test('a chunked body (no Content-Length) is read whole', async (t) => {
  const before = fastifyHandlerCalls;
  const body = Buffer.from(review);
  const chunk = (part: Buffer): Buffer => Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]);
  const parts = [chunk(body.subarray(0, 100)), chunk(body.subarray(100)), Buffer.from('0\r\n\r\n')];
  const answer = await sendInParts('/validate/echo-label', parts, 'Transfer-Encoding: chunked');
  t.match(answer, /^HTTP\/1\.1 200 /);
  t.match(answer, /"warnings":\["label: web"\]/);
  t.ok(fastifyHandlerCalls > before, 'fastify answered');
});

t.test('a caller that goes away mid-body costs nothing but its own call', async (t) => {
  const before = served.logs.lines.length;
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: served.port, servername: TEST_SERVER_NAME, ca: ca.certPem }, () => {
      socket.write('POST /validate/allow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"apiVersion":');
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  await sleep(50);
  const after = await call('/validate/allow', review, PLAIN);
  t.equal(after.result.status, 200, 'still serving');
  t.same(
    served.logs.lines.slice(before).filter((line) => Number(line.level) >= 40),
    [],
    'nothing logged as a failure',
  );
});
