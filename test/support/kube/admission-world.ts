/**
 * The double with admission on every write, for the tests that drive it through its REST API and
 * kubectl: the API, kube-proxy's Service model, the admission that calls webhooks through it, one
 * test webhook server whose answer a test sets, a kubeconfig for kubectl, and the teardown.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookAdmission, type WebhookAdmission } from '../../../local-cluster/admission-caller/index.js';
import { KubeProxy } from '../../../local-cluster/cluster/kube-proxy.js';
import { startFakeApiServer, type FakeApiServer } from '../../../local-cluster/fake-apiserver/index.js';
import { allow, startTestWebhookServer, type ReceivedReview, type TestWebhookServer, type WebhookReply } from '../../../local-cluster/fake-apiserver/webhook-server.js';
import { shellPath } from '../tools/kubectl.js';

export interface AdmissionWorld {
  api: FakeApiServer;
  hook: TestWebhookServer;
  /** kube-apiserver's admission on writes: its audit records among others. */
  admission: WebhookAdmission;
  /** How the test webhook answers from now on (allow until set). */
  respond: (received: ReceivedReview) => WebhookReply;
  /** A temporary folder, removed at teardown. */
  dir: string;
  kubeconfig: string;
  /** The environment kubectl runs with against the double. */
  kubectlEnv: Record<string, string>;
}

interface Teardownable {
  teardown(fn: () => Promise<void>): void;
}

export async function startAdmissionWorld(t: Teardownable, namespaces: string[], dirPrefix: string): Promise<AdmissionWorld> {
  const api = await startFakeApiServer({ namespaces });
  const proxy = new KubeProxy(api.store, 0);
  proxy.start();
  const admission = createWebhookAdmission({ store: api.store, resolveService: (namespace, name, port) => proxy.resolve(namespace, name, port), newAgent: () => proxy.agent() });
  api.setAdmission(admission.admission);
  const world = { respond: allow } as AdmissionWorld;
  const hook = await startTestWebhookServer({ respond: (received) => world.respond(received) });
  const dir = await mkdtemp(join(tmpdir(), dirPrefix));
  const kubeconfig = join(dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig);
  t.teardown(async () => {
    admission.close();
    proxy.close();
    await hook.close();
    await api.close();
    await rm(dir, { recursive: true, force: true });
  });
  return Object.assign(world, { api, hook, admission, dir, kubeconfig, kubectlEnv: { PATH: shellPath(), HOME: dir, KUBECACHEDIR: join(dir, 'cache'), KUBECONFIG: kubeconfig } });
}

/**
 * The test webhook server as Service `hook` in namespace `webhooks` (port 443), with a ready
 * endpoint at its port, so webhook configurations can name it by service as kube-apiserver's do.
 */
export async function serveHookAsService(world: Pick<AdmissionWorld, 'api' | 'hook'>): Promise<void> {
  world.api.store.put('services', { metadata: { name: 'hook', namespace: 'webhooks' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'https', port: 443, targetPort: 9443, protocol: 'TCP' }], selector: { app: 'hook' } } });
  world.api.store.put('endpointslices', {
    metadata: { name: 'hook-abcde', namespace: 'webhooks', labels: { 'kubernetes.io/service-name': 'hook' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    ports: [{ name: 'https', port: world.hook.port, protocol: 'TCP' }],
  });
  // kube-proxy's model follows the store's events on the next turns of the loop.
  await new Promise((resolve) => setTimeout(resolve, 50));
}
