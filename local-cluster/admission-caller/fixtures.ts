/** Test fixtures: webhook entries pointing at a test webhook server, registered through the REST API. */
import { rawRequest } from '../fake-apiserver/raw-client.js';
import { startFakeApiServer, type FakeApiServer, type KubeObject } from '../fake-apiserver/index.js';
import { startTestWebhookServer, type TestWebhookServer } from '../fake-apiserver/webhook-server.js';
import { createAdmissionCaller, type AdmissionCaller } from './index.js';
import type { AdmitRequest } from './types.js';

/**
 * The API double (namespaces team-a and webhooks), one test webhook server behind the Service
 * `webhooks/hook`, and the caller that reaches it: all three closed in `t.teardown`.
 */
export async function startCallerRig(t: { teardown(fn: () => unknown): void }): Promise<{ api: FakeApiServer; hook: TestWebhookServer; caller: AdmissionCaller }> {
  const api = await startFakeApiServer({ namespaces: ['team-a', 'webhooks'] });
  const hook = await startTestWebhookServer();
  const caller = createAdmissionCaller({ api, resolveService: () => ({ host: '127.0.0.1', port: hook.port }) });
  t.teardown(async () => {
    await caller.close();
    await hook.close();
    await api.close();
  });
  return { api, hook, caller };
}

export type WebhookEntry = Record<string, unknown>;

export function webhookEntry(name: string, caBundle: string, overrides: WebhookEntry = {}): WebhookEntry {
  return {
    name,
    clientConfig: { service: { name: 'hook', namespace: 'webhooks', path: '/admit' }, caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE', 'DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...overrides,
  };
}

/** Creates the configuration through the API (validation and defaults apply); throws unless 201. */
export async function register(
  api: FakeApiServer,
  type: 'mutating' | 'validating',
  name: string,
  webhooks: WebhookEntry[],
): Promise<KubeObject> {
  const resource = `${type}webhookconfigurations`;
  const kind = type === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const reply = await rawRequest(api, 'POST', `/apis/admissionregistration.k8s.io/v1/${resource}`, {
    body: { apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks },
  });
  if (reply.status !== 201) throw new Error(`register ${name}: ${reply.status} ${reply.text}`);
  return reply.json as KubeObject;
}

export function pod(name: string, namespace = 'team-a', labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  };
}

export function createPodRequest(object: KubeObject, extra: Partial<AdmitRequest> = {}): AdmitRequest {
  return {
    operation: 'CREATE',
    object,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    ...extra,
  };
}
