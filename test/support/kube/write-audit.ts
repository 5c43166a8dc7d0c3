/**
 * What a server process wrote, as the API double alone tells it: the requests that would change a
 * stored object (a dry run and a review store nothing), and another install's configuration that
 * holds this install's configuration name.
 */
import type { KubeObject, ObjectStore, RequestRecord } from '../../../local-cluster/fake-apiserver/index.js';
import { NAME, type ClusterHarness } from './cluster-harness.js';

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
/** Resources whose create asks a question and stores nothing. */
const QUESTIONS = new Set(['subjectaccessreviews', 'selfsubjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectrulesreviews', 'tokenreviews']);

const isDryRun = (record: RequestRecord): boolean => new URL(record.path, 'https://double.invalid').searchParams.getAll('dryRun').includes('All');

/** Every request since `sinceMs` (performance.now()) that asked to change a stored object, answered or refused: `verb resource/name status`. */
export function writeRequests(cluster: ClusterHarness, sinceMs: number): string[] {
  return cluster.api.requests
    .filter((r) => r.startedAt >= sinceMs && r.verb !== undefined && WRITE_VERBS.has(r.verb) && !QUESTIONS.has(r.resource ?? '') && !isDryRun(r))
    .map((r) => `${r.verb} ${r.resource ?? ''}/${r.name ?? ''} ${r.status ?? 'no answer'}`);
}

/** The namespace of the other install: its Service is there. */
export const OTHER_INSTALL_NAMESPACE = 'other-install';

/**
 * A ValidatingWebhookConfiguration of this install's name that another install of the same server
 * registered (its label, its Service in another namespace, a Fail webhook): what must never be
 * written or deleted by this install.
 */
export function seedOtherInstallsConfiguration(store: ObjectStore): KubeObject {
  return store.put('validatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: NAME, labels: { 'app.kubernetes.io/managed-by': 'kube-admission-server' } },
    webhooks: [
      {
        name: `deny-privileged.${NAME}.${OTHER_INSTALL_NAMESPACE}.svc`,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        clientConfig: { service: { name: NAME, namespace: OTHER_INSTALL_NAMESPACE, path: '/validate/deny-privileged', port: 443 }, caBundle: Buffer.from('the other install\'s CA').toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
      },
    ],
  } as KubeObject);
}
