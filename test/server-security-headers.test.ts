/**
 * Every answer of the webhook port carries the static security headers, whoever writes it:
 * fastify's review route, its error and not-found handlers, the client-certificate gate, GET
 * /served-entries and the raw answers to malformed HTTP. The expected headers are written here,
 * as helmet 8 documents them for the server's options (its CSP and frame options, none of the
 * browser-only page headers), not imported from src/. None other of helmet's is sent.
 */
import { connect } from 'node:tls';
import t from 'tap';
import { createTestCa, podReview, request, serve, TEST_SERVER_NAME, validating } from './support/server/server-harness.js';

const EXPECTED: Record<string, string> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
};

const ca = createTestCa();
const clientCa = createTestCa('apiserver client CA');
const allow = validating('allow', () => ({ allowed: true }));
const served = await serve([allow], { ca });
const gated = await serve([allow], { ca, clientCaPem: clientCa.certPem });
t.teardown(() => Promise.all([served.server.close(1000), gated.server.close(1000)]));

function checkHeaders(what: string, status: number, expectedStatus: number, headers: Record<string, string | string[] | undefined>): void {
  t.equal(status, expectedStatus, `${what}: ${expectedStatus}`);
  for (const [name, value] of Object.entries(EXPECTED)) t.equal(headers[name], value, `${what}: ${name}`);
  for (const name of ['origin-agent-cluster', 'x-dns-prefetch-control', 'x-download-options', 'x-xss-protection', 'x-powered-by']) t.equal(headers[name], undefined, `${what}: no ${name}`);
}

/** Writes `raw` on a new TLS connection and parses the status line and headers of the answer. */
function rawExchange(port: number, raw: string): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: TEST_SERVER_NAME, ca: ca.certPem }, () => socket.write(raw));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
      const end = answer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [statusLine = '', ...lines] = answer.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      socket.destroy();
      resolve({ status: Number(statusLine.split(' ')[1]), headers });
    });
    socket.on('error', reject);
  });
}

t.test('every kind of answer carries the security headers', async () => {
  const post = (path: string, options: Parameters<typeof request>[3] | object = {}) => request(served.port, path, podReview(), { ca: ca.certPem, ...options });
  const review = await post('/validate/allow');
  checkHeaders('a review', review.status, 200, review.headers);
  const withCharset = await post('/validate/allow', { headers: { 'content-type': 'application/json; charset=utf-8' } });
  checkHeaders('a review with a charset', withCharset.status, 200, withCharset.headers);
  const malformed = await post('/validate/allow', { raw: '{"apiVersion":' });
  checkHeaders('malformed JSON', malformed.status, 400, malformed.headers);
  const unknownPath = await post('/admit');
  checkHeaders('an unknown path', unknownPath.status, 404, unknownPath.headers);
  const wrongMethod = await request(served.port, '/validate/allow', undefined, { ca: ca.certPem, method: 'GET' });
  checkHeaders('a wrong method', wrongMethod.status, 405, wrongMethod.headers);
  const wrongType = await post('/validate/allow', { headers: { 'content-type': 'text/plain' } });
  checkHeaders('a wrong media type', wrongType.status, 415, wrongType.headers);
  const entries = await request(served.port, '/served-entries', undefined, { ca: ca.certPem, method: 'GET' });
  checkHeaders('GET /served-entries', entries.status, 200, entries.headers);
  const refused = await request(gated.port, '/validate/allow', podReview(), { ca: ca.certPem });
  checkHeaders('no client certificate (--client-ca)', refused.status, 401, refused.headers);
  const tooLarge = await rawExchange(served.port, 'POST /validate/allow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 8000000\r\n\r\n{');
  checkHeaders('a body over the limit', tooLarge.status, 413, tooLarge.headers);
  const garbage = await rawExchange(served.port, 'NOT HTTP AT ALL\r\n\r\n');
  checkHeaders('malformed HTTP', garbage.status, 400, garbage.headers);
});
