// The double driven by the real @kubernetes/client-node 1.4 APIs, through a kubeconfig from the helper.
import t from 'tap';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { startFakeApiServer } from '../local-cluster/fake-apiserver/index.js';

const configuration = (name: string): V1ValidatingWebhookConfiguration => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name },
  webhooks: [
    {
      name: 'pods.policy.example.com',
      clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/validate/pods' }, caBundle: 'Y2E=' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    },
  ],
});

function statusOf(error: unknown): { code: number; body: { message?: string; reason?: string } } {
  if (!(error instanceof ApiException)) throw error;
  return { code: error.code, body: JSON.parse(error.body as string) as { message?: string; reason?: string } };
}

t.test('client-node works against the double unchanged', async (t) => {
  const api = await startFakeApiServer({ namespaces: ['kube-admission-server'] });
  t.teardown(() => api.close());
  const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'kubeconfig');
  await api.writeKubeconfig(path, { namespace: 'kube-admission-server' });
  t.equal((await stat(path)).mode & 0o777, 0o600, 'kubeconfig holds a token: mode 0600');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  t.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'kube-admission-server');

  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const created = await admission.createValidatingWebhookConfiguration({ body: configuration('demo') });
  t.equal(created.metadata?.generation, 1);
  t.ok(created.metadata?.uid, 'uid assigned');
  t.equal(created.webhooks?.[0]?.failurePolicy, 'Fail', 'defaults visible');
  t.equal(created.webhooks?.[0]?.timeoutSeconds, 10);
  t.equal(created.webhooks?.[0]?.clientConfig.service?.port, 443);

  const read = await admission.readValidatingWebhookConfiguration({ name: 'demo' });
  t.equal(read.metadata?.resourceVersion, created.metadata?.resourceVersion);
  read.webhooks![0]!.timeoutSeconds = 5;
  const replaced = await admission.replaceValidatingWebhookConfiguration({ name: 'demo', body: read });
  t.equal(replaced.metadata?.generation, 2, 'a webhooks change bumps generation');

  const stale = await admission
    .replaceValidatingWebhookConfiguration({ name: 'demo', body: read })
    .then(() => undefined, statusOf);
  t.equal(stale?.code, 409);
  t.equal(stale?.body.reason, 'Conflict');

  const patched = await admission.patchValidatingWebhookConfiguration(
    { name: 'demo', body: [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 7 }] },
    setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
  );
  t.equal(patched.webhooks?.[0]?.timeoutSeconds, 7);
  const merged = await admission.patchValidatingWebhookConfiguration(
    { name: 'demo', body: { metadata: { labels: { app: 'x' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  t.same(merged.metadata?.labels, { app: 'x' });

  const list = await admission.listValidatingWebhookConfiguration();
  t.same(list.items.map((i) => i.metadata?.name), ['demo']);

  const deleted = await admission.deleteValidatingWebhookConfiguration({ name: 'demo' });
  t.equal(deleted.status, 'Success');
  const missing = await admission.deleteValidatingWebhookConfiguration({ name: 'demo' }).then(() => undefined, statusOf);
  t.equal(missing?.code, 404);
  t.equal(missing?.body.message, 'validatingwebhookconfigurations.admissionregistration.k8s.io "demo" not found');

  const core = kc.makeApiClient(CoreV1Api);
  const secret = await core.createNamespacedSecret({
    namespace: 'kube-admission-server',
    body: { metadata: { name: 'ca' }, stringData: { 'ca.crt': 'pem' } },
  });
  t.equal(secret.data?.['ca.crt'], Buffer.from('pem').toString('base64'), 'stringData lands in data');
  const exists = await core
    .createNamespacedSecret({ namespace: 'kube-admission-server', body: { metadata: { name: 'ca' } } })
    .then(() => undefined, statusOf);
  t.equal(exists?.code, 409);
  t.equal(exists?.body.reason, 'AlreadyExists');
  const readSecret = await core.readNamespacedSecret({ name: 'ca', namespace: 'kube-admission-server' });
  t.equal(readSecret.type, 'Opaque');
  await core.deleteNamespacedSecret({ name: 'ca', namespace: 'kube-admission-server' });

  const coordination = kc.makeApiClient(CoordinationV1Api);
  const lease = await coordination.createNamespacedLease({
    namespace: 'kube-admission-server',
    body: { metadata: { name: 'leader' }, spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 } },
  });
  lease.spec!.holderIdentity = 'pod-b';
  const renewed = await coordination.replaceNamespacedLease({ name: 'leader', namespace: 'kube-admission-server', body: lease });
  t.equal(renewed.spec?.holderIdentity, 'pod-b');
  const lost = await coordination
    .replaceNamespacedLease({ name: 'leader', namespace: 'kube-admission-server', body: lease })
    .then(() => undefined, statusOf);
  t.equal(lost?.code, 409, 'a stale lease update conflicts');
});

t.test('client-node Watch sees ADDED, MODIFIED and DELETED', async (t) => {
  const api = await startFakeApiServer();
  t.teardown(() => api.close());
  const kc = new KubeConfig();
  kc.loadFromString((await import('../local-cluster/util/kubeconfig.js')).renderKubeconfig(api));
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const created = await admission.createValidatingWebhookConfiguration({ body: configuration('watched') });

  const events: string[] = [];
  let sawDeleted!: () => void;
  const deleted = new Promise<void>((resolve) => (sawDeleted = resolve));
  const done = new Promise<unknown>((resolve) => {
    void new Watch(kc)
      .watch(
        '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
        { resourceVersion: created.metadata?.resourceVersion },
        (type, object: V1ValidatingWebhookConfiguration) => {
          events.push(`${type} ${object.metadata?.name} ${object.webhooks?.[0]?.timeoutSeconds}`);
          if (type === 'DELETED') sawDeleted();
        },
        resolve,
      )
      .then((controller) => t.teardown(() => controller.abort()));
  });
  // The watch request stays open: wait until the server has routed it before changing things.
  await api.waitForRequest((r) => r.verb === 'watch', { phase: 'started', timeoutMs: 5000 });
  const current = await admission.readValidatingWebhookConfiguration({ name: 'watched' });
  current.webhooks![0]!.timeoutSeconds = 3;
  await admission.replaceValidatingWebhookConfiguration({ name: 'watched', body: current });
  await admission.deleteValidatingWebhookConfiguration({ name: 'watched' });
  await deleted;
  t.same(events, ['MODIFIED watched 3', 'DELETED watched 3'], 'only changes after the given resourceVersion');
  await api.close();
  t.equal(await done, null, 'the watch ends cleanly when the server closes');
});
