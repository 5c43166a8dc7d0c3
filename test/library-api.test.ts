import t from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { annotateCreator, requirePinnedImages } from '../examples/custom-handler.js';
import { runKubeAdmissionServer } from '../src/index.js';
import type { EnvironmentProbe } from '../src/config/load-config.js';
import { EXIT_MS, STARTUP_MS, within } from './support/deadline.js';
import { podReview, request } from './support/server/server-harness.js';

const noCluster: EnvironmentProbe = { env: { LOG_LEVEL: 'silent' }, readFile: () => undefined, exists: () => false, hostname: () => 'test' };

t.test('custom TypeScript handlers are served with the same lifecycle as the policy file', async (t) => {
  const certDir = await mkdtemp(join(tmpdir(), 'kas-lib-'));
  t.teardown(() => rm(certDir, { recursive: true, force: true }));
  const stop = new AbortController();
  let onReady: (ports: { port: number }) => void = () => undefined;
  const ready = new Promise<{ port: number }>((resolve) => (onReady = resolve));
  const running = runKubeAdmissionServer({
    webhooks: [requirePinnedImages('enforce'), annotateCreator()],
    argv: ['--port', '0', '--health-port', '0', '--cert-dir', certDir],
    environment: noCluster,
    stopSignal: stop.signal,
    onReady,
  });
  // Stopped whatever the outcome, and awaited: a server left running would hold the test open.
  t.teardown(async () => {
    stop.abort();
    await within(EXIT_MS, 'the in-process server to stop', running);
  });
  const { port } = await within(STARTUP_MS, 'the in-process server to be ready', Promise.race([ready, running.then((code) => Promise.reject(new Error(`exited early with ${code}`)))]));
  const caPem = await readFile(join(certDir, 'ca.crt'), 'utf8');
  const unpinned = podReview({ uid: 'lib-1', image: 'nginx:latest' });
  const reply = await request(port, '/validate/require-pinned-images?timeout=5s', unpinned, { ca: caPem });
  const denial = (reply.json as { response: { allowed: boolean; status: { code: number; message: string } } }).response;
  t.equal(denial.allowed, false);
  t.equal(denial.status.code, 403);
  t.match(denial.status.message, /image "nginx:latest" is not pinned/);

  const mutated = await request(port, '/mutate/annotate-creator?timeout=5s', unpinned, { ca: caPem });
  const patch = JSON.parse(Buffer.from((mutated.json as { response: { patch: string } }).response.patch, 'base64').toString('utf8'));
  t.same(patch, [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/created-by': 'kubernetes-admin' } }]);

  const builtIn = await request(port, '/validate/deny-privileged?timeout=5s', unpinned, { ca: caPem });
  t.equal(builtIn.status, 200, 'the policy file webhooks are served alongside');

  stop.abort();
  t.equal(await within(EXIT_MS, 'the in-process server to stop', running), 0, 'a clean stop resolves with exit code 0');
});

t.test('invalid configuration resolves with 2 instead of exiting', async (t) => {
  const code = await runKubeAdmissionServer({ argv: ['--port', 'none'], environment: noCluster, stopSignal: new AbortController().signal });
  t.equal(code, 2);
});
