/** Test fixtures: webhook entries pointing at a test webhook server, registered through the REST API. */
import { rawRequest } from '../fake-apiserver/raw-client.js';
import type { FakeApiServer, KubeObject } from '../fake-apiserver/index.js';
import type { AdmitRequest } from './types.js';

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
