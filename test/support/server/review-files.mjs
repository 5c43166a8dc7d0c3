// Which files of the compiled src/ run any code while one review is answered: the compiled
// server's library API serves one custom handler in local mode, and V8's precise coverage is
// taken just before and just after one review, after a warm-up. Prints one JSON line.
// usage: node review-files.mjs <repository root> <validating|mutating>
import { Buffer } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [root, type] = process.argv.slice(2);
const lib = await import(pathToFileURL(join(root, 'dist/src/index.js')).href);
const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
const webhook =
  type === 'mutating'
    ? lib.defineMutatingWebhook({ name: 'label-pods', rules, handler: (req) => ({ allowed: true, object: { ...req.object, metadata: { ...req.object.metadata, labels: { team: 'a' } } } }) })
    : lib.defineValidatingWebhook({ name: 'check-pods', rules, handler: () => ({ allowed: true }) });
const certDir = mkdtempSync(join(tmpdir(), 'review-files-'));
const stop = new globalThis.AbortController();
const ports = await new Promise((resolve, reject) => {
  lib
    .runKubeAdmissionServer({ webhooks: [webhook], argv: ['--port', '0', '--health-port', '0', '--cert-dir', certDir, '--log-level', 'warn'], stopSignal: stop.signal, onReady: resolve })
    .then((code) => reject(new Error(`the server stopped with ${code} before it was ready`)), reject);
});
const serverName = 'kube-admission-server.default.svc';
const agent = new Agent({ keepAlive: true, ca: readFileSync(join(certDir, 'ca.crt')), servername: serverName });
const body = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '3f33db0e-e2bf-4ccc-812f-b712a66f202d',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    name: 'web',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: { username: 'kubernetes-admin' },
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'team-a' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    oldObject: null,
    dryRun: false,
  },
});
const path = `/${type === 'mutating' ? 'mutate/label-pods' : 'validate/check-pods'}?timeout=10s`;
const send = () =>
  new Promise((resolve, reject) => {
    const call = request({ host: '127.0.0.1', port: ports.port, path, method: 'POST', agent, servername: serverName, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    call.on('error', reject);
    call.end(body);
  });
for (let i = 0; i < 200; i++) await send();
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
await session.post('Profiler.takePreciseCoverage');
const answer = await send();
const { result } = await session.post('Profiler.takePreciseCoverage');
const files = result
  .filter((script) => script.url.includes('/dist/src/') && script.functions.some((f) => f.ranges.some((r) => r.count > 0)))
  .map((script) => script.url.slice(script.url.indexOf('/dist/src/') + '/dist/'.length).replace(/\.js$/, '.ts'))
  .sort();
process.stdout.write(`${JSON.stringify({ answer, files })}\n`);
agent.destroy();
stop.abort();
rmSync(certDir, { recursive: true, force: true });
