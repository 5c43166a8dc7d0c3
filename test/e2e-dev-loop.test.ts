import t from 'tap';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdmissionCaller, type AdmissionCaller, type AdmitResult } from '../local-cluster/admission-caller/index.js';
import type { KubeObject } from '../local-cluster/fake-apiserver/index.js';
import { EVENT_MS, STARTUP_MS } from './support/deadline.js';
import { ClusterHarness, type Cleanups, POD_KIND, POD_RESOURCE, podFixture } from './support/kube/cluster-harness.js';
import { writeHandlerProject, writeMessage } from './support/kube/dev-loop.js';
import { ChildServer } from './support/server/child-server.js';
import { createTestCa, issueServingCert } from './support/tls/test-certs.js';
import { servedBy } from './support/tls/served-certificate.js';

interface StoredWebhook {
  name: string;
  clientConfig: { url?: string; service?: unknown; caBundle: string };
}
interface StoredConfiguration extends KubeObject {
  webhooks?: StoredWebhook[];
}

const INSTALLED = 'kube-admission-server';
const DEV_NAME = /^kube-admission-server-dev-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** kube-apiserver's caller: it dials clientConfig.url itself; there is no Service to resolve. */
function urlCaller(t: Cleanups, cluster: ClusterHarness): AdmissionCaller {
  const caller = createAdmissionCaller({
    api: cluster.api,
    resolveService: (namespace, name) => {
      throw new Error(`the dev loop registered a Service reference (${namespace}/${name}) instead of a URL`);
    },
  });
  t.teardown(() => caller.close());
  return caller;
}

function createPod(caller: AdmissionCaller): Promise<AdmitResult> {
  return caller.admit({ operation: 'CREATE', object: podFixture({ app: 'web' }), kind: POD_KIND, resource: POD_RESOURCE });
}

function denialMessage(result: AdmitResult): string {
  return result.allowed ? 'ALLOWED' : (result.status.message ?? '');
}

function devConfigurations(cluster: ClusterHarness): StoredConfiguration[] {
  return ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'].flatMap((resource) =>
    (cluster.api.store.list(resource) as StoredConfiguration[]).filter((c) => c.metadata?.name !== INSTALLED),
  );
}

function startDev(cluster: ClusterHarness, dir: string, module: string, extra: readonly string[] = [], env: Record<string, string> = {}): ChildServer {
  return new ChildServer(
    ['dev', '--port', '0', '--health-port', '0', '--handlers', module, '--reachable-at', '127.0.0.1', '--cert-dir', join(dir, 'certs'), '--shutdown-timeout', '4s', ...extra],
    { KUBECONFIG: cluster.kubeconfig, ...env },
  );
}

t.test('dev: registered by URL, denies through the caller, serves an edit with no admitted write between, survives a broken module, deletes everything on Ctrl-C twice', async (t) => {
  const cluster = await ClusterHarness.start(t);
  // An installed server's configuration: the dev loop must neither touch nor collide with it.
  const installed = cluster.api.store.put('validatingwebhookconfigurations', { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: INSTALLED }, webhooks: [] } as KubeObject);
  const dir = await mkdtemp(join(tmpdir(), 'kas-dev-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const module = await writeHandlerProject(dir, 'version one says no');

  // Under the inspector, as an author debugging a handler runs it.
  const dev = startDev(cluster, dir, module, [], { NODE_OPTIONS: '--inspect=127.0.0.1:0' });
  t.teardown(() => dev.stop('SIGKILL'));
  const { port } = await dev.listening(STARTUP_MS);
  await dev.waitForMessage('ready', STARTUP_MS);
  t.match(dev.stderr, /Debugger listening on ws:\/\/127\.0\.0\.1:\d+\//, 'runs under node --inspect');
  t.ok(dev.logs.some((l) => l.msg === 'self-check passed'), 'self-checked before registering');

  const [validating, ...others] = devConfigurations(cluster).filter((c) => c.kind === 'ValidatingWebhookConfiguration');
  t.equal(others.length, 0, 'one dev validating configuration');
  t.match(validating?.metadata?.name, DEV_NAME, 'named with a -dev-<user> suffix');
  const hook = validating!.webhooks![0]!;
  // Grouped registration (the default): the group's path names the entry after the group.
  t.match(hook.clientConfig.url, new RegExp(`^https://127\\.0\\.0\\.1:${port}/validate/validating-fail-t\\d+/deny-pods$`), 'clientConfig.url points at the reachable address and the listener');
  t.equal(hook.clientConfig.service, undefined, 'no Service reference');
  const { served } = await servedBy(port, '127.0.0.1', Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8'));
  t.equal(served.checkIP('127.0.0.1'), '127.0.0.1', 'the served certificate covers the URL host and verifies against the registered caBundle');

  const caller = urlCaller(t, cluster);
  t.match(denialMessage(await createPod(caller)), /version one says no/, 'a write is denied by the dev handler');

  // Edit while writes keep coming: every write is denied, first by v1, then by v2.
  const results: string[] = [];
  let writing = true;
  const writer = (async () => {
    while (writing) results.push(denialMessage(await createPod(caller)));
  })();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const editedAt = performance.now();
  await writeMessage(dir, 'version two says no');
  const reloaded = await dev.waitForLog((l) => l.msg === 'handlers reloaded', EVENT_MS);
  const deadline = performance.now() + EVENT_MS;
  while (!results.some((m) => m.includes('version two')) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const servedAfterMs = performance.now() - editedAt;
  writing = false;
  await writer;
  t.ok(results.some((m) => m.includes('version two')), `the edit is served (after ${Math.round(servedAfterMs)} ms; reload logged ${reloaded['ms']} ms)`);
  t.same(results.filter((m) => !/version (one|two) says no/.test(m)), [], `none of ${results.length} writes during the edit was admitted or failed`);
  const firstV2 = results.findIndex((m) => m.includes('version two'));
  t.ok(results.slice(firstV2).every((m) => m.includes('version two')), 'once v2 answers, v1 never answers again');

  // A module that fails to load keeps the previous handlers, and says why.
  await writeFile(join(dir, 'message.js'), 'export const message = ;\n');
  const failed = await dev.waitForLog((l) => l.msg === 'the changed handlers cannot be served; the previous handlers keep answering', EVENT_MS);
  t.match(failed['error'], /SyntaxError|Unexpected token/, 'the log says why');
  t.match(denialMessage(await createPod(caller)), /version two says no/, 'the previous handlers keep answering');

  // Ctrl-C twice, the second while the deletion is under way (slowed): everything is deleted.
  cluster.api.faults.add({ resource: 'validatingwebhookconfigurations', verb: 'delete' }, { latencyMs: 1000 });
  const stoppedAt = performance.now();
  dev.process.kill('SIGINT');
  await cluster.api.waitForRequest((r) => r.verb === 'delete' && r.resource === 'validatingwebhookconfigurations' && r.startedAt > stoppedAt, { timeoutMs: EVENT_MS, phase: 'started' });
  dev.process.kill('SIGINT');
  const exit = await dev.exit(EVENT_MS);
  t.equal(exit.code, 0, `exits 0 after deleting; stderr: ${dev.stderr.slice(-300)}`);
  t.same(devConfigurations(cluster).map((c) => c.metadata?.name), [], 'both dev configurations are deleted');
  t.same(cluster.api.store.list('leases'), [], 'no Lease was written');
  t.same(cluster.api.store.list('secrets').map((s) => s.metadata?.name), [], 'no Secret was written');
  t.equal(cluster.api.store.get('validatingwebhookconfigurations', undefined, INSTALLED)?.metadata?.resourceVersion, installed.metadata!.resourceVersion, 'the installed server\'s configuration is untouched');
  t.ok(exit.atMs - stoppedAt < 4000 + 2000, 'within the shutdown deadline');
});

t.test('dev: a certificate that does not cover the reachable host fails the self-check; nothing is registered', async (t) => {
  const cluster = await ClusterHarness.start(t);
  const dir = await mkdtemp(join(tmpdir(), 'kas-dev-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const module = await writeHandlerProject(dir, 'no');
  // Material made outside src/, for the Service name (and loopback) only: kube-apiserver dialling dev.example would refuse it.
  const ca = createTestCa();
  const leaf = issueServingCert(ca);
  const certs = join(dir, 'certs');
  await mkdir(certs);
  await writeFile(join(certs, 'tls.crt'), leaf.certPem);
  await writeFile(join(certs, 'tls.key'), leaf.keyPem, { mode: 0o600 });
  await writeFile(join(certs, 'ca.crt'), ca.certPem);
  const dev = startDev(cluster, dir, module, ['--tls-mode', 'files', '--namespace', 'default', '--reachable-at', 'dev.example', '--self-check-timeout', '2s']);
  t.teardown(() => dev.stop('SIGKILL'));
  const exit = await dev.exit(STARTUP_MS);
  t.equal(exit.code, 1, 'startup fails');
  t.match(dev.logs.find((l) => l.msg === 'startup failed; shutting down')?.['error'], /self-check failed: no valid answer from https:\/\/dev\.example:\d+ .*dev\.example/, 'the self-check names the URL host it could not verify');
  t.same(devConfigurations(cluster), [], 'nothing registered');
  t.equal(cluster.api.requests.filter((r) => r.verb === 'create' && /webhookconfigurations$/.test(r.resource ?? '')).length, 0, 'not even attempted');
});

t.test('dev: flags are checked before anything starts', async (t) => {
  const dev = new ChildServer(['dev', '--reachable-at', 'https://x/']);
  const exit = await dev.exit(STARTUP_MS);
  t.equal(exit.code, 2);
  t.match(dev.stderr, /--reachable-at: "https:\/\/x\/" is not HOST or HOST:PORT/);
  t.match(dev.stderr, /--handlers: required/);
});
