import t, { type Test } from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { annotateCreator, requirePinnedImages } from '../examples/custom-handler.js';
import { runKubeAdmissionServer } from '../src/index.js';
import type { EnvironmentProbe } from '../src/config/load-config.js';
import { EXIT_MS, STARTUP_MS, within } from './support/deadline.js';
import { podReview, request, type ReviewResponse } from './support/server/server-harness.js';

const noCluster: EnvironmentProbe = { env: { LOG_LEVEL: 'silent' }, readFile: () => undefined, exists: () => false, hostname: () => 'test' };

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The program of examples/server.ts in this process, on ports the OS picks; stopped when the test ends. */
async function startProgram(t: Test, extraArgs: readonly string[] = []): Promise<{ port: number; ca: string; stop: () => Promise<number> }> {
  const certDir = await mkdtemp(join(tmpdir(), 'kas-lib-'));
  t.teardown(() => rm(certDir, { recursive: true, force: true }));
  const stop = new AbortController();
  let onReady: (ports: { port: number }) => void = () => undefined;
  const ready = new Promise<{ port: number }>((resolve) => (onReady = resolve));
  const running = runKubeAdmissionServer({
    webhooks: [requirePinnedImages('enforce'), annotateCreator()],
    argv: ['--port', '0', '--health-port', '0', '--cert-dir', certDir, ...extraArgs],
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
  const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');
  return { port, ca, stop: () => (stop.abort(), within(EXIT_MS, 'the in-process server to stop', running)) };
}

/** A Pod with a privileged container: the bundled example policy's deny-privileged refuses it. */
function privilegedPod(): Record<string, unknown> {
  const review = podReview({ image: 'nginx:1.27.3' });
  ((review['request'] as { object: { spec: { containers: Array<Record<string, unknown>> } } }).object.spec.containers[0]!)['securityContext'] = { privileged: true };
  return review;
}

t.test('custom TypeScript handlers are served with the same lifecycle, and alone: no example policy by default', async (t) => {
  const { port, ca, stop } = await startProgram(t);
  const unpinned = podReview({ uid: 'lib-1', image: 'nginx:latest' });
  const reply = await request(port, '/validate/require-pinned-images?timeout=5s', unpinned, { ca });
  const denial = (reply.json as { response: { allowed: boolean; status: { code: number; message: string } } }).response;
  t.equal(denial.allowed, false);
  t.equal(denial.status.code, 403);
  t.match(denial.status.message, /image "nginx:latest" is not pinned/);

  const mutated = await request(port, '/mutate/annotate-creator?timeout=5s', unpinned, { ca });
  const patch = JSON.parse(Buffer.from((mutated.json as { response: { patch: string } }).response.patch, 'base64').toString('utf8'));
  t.same(patch, [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/created-by': 'kubernetes-admin' } }]);

  const builtIn = (await request(port, '/validate/deny-privileged?timeout=5s', privilegedPod(), { ca })).json as ReviewResponse;
  t.equal(builtIn.response.allowed, true, 'the bundled example policy is not served: a privileged Pod is not refused');
  t.match(builtIn.response.warnings?.join('\n') ?? '', /does not serve "deny-privileged"/, 'answered as a webhook this server does not serve');

  t.equal(await stop(), 0, 'a clean stop resolves with exit code 0');
});

t.test('a policy file named by --policy-file is served next to the custom handlers', async (t) => {
  const { port, ca } = await startProgram(t, ['--policy-file', join(ROOT, 'policies', 'example.yaml')]);
  const builtIn = (await request(port, '/validate/deny-privileged?timeout=5s', privilegedPod(), { ca })).json as ReviewResponse;
  t.equal(builtIn.response.allowed, false, 'the policy\'s deny-privileged refuses a privileged Pod');
  t.match(builtIn.response.status?.message, /privileged/);
  const pinned = (await request(port, '/validate/require-pinned-images?timeout=5s', podReview({ image: 'nginx:latest' }), { ca })).json as ReviewResponse;
  t.equal(pinned.response.allowed, false, 'and the custom handler still answers');
});

t.test('invalid configuration resolves with 2 instead of exiting', async (t) => {
  const code = await runKubeAdmissionServer({ argv: ['--port', 'none'], environment: noCluster, stopSignal: new AbortController().signal });
  t.equal(code, 2);
});
