/** Shared builders for the policy tests: objects and AdmissionRequests shaped like kube-apiserver's. */
import pino from 'pino';
import { Registry } from 'prom-client';
import { handlerMetrics } from '../../../src/server/handler-metrics.js';
import { randomUUID } from 'node:crypto';
import { parsePolicy } from '../../../src/policy/policy-file.js';
import type { PolicyOptions } from '../../../src/policy/policy.js';
import type { AdmissionRequest, KubeObject, MutationDecision, Operation, Webhook } from '../../../src/admission/types.js';

type Json = Record<string, unknown>;

const RESOURCES: Record<string, { group: string; version: string; resource: string }> = {
  Pod: { group: '', version: 'v1', resource: 'pods' },
  Deployment: { group: 'apps', version: 'v1', resource: 'deployments' },
  StatefulSet: { group: 'apps', version: 'v1', resource: 'statefulsets' },
  DaemonSet: { group: 'apps', version: 'v1', resource: 'daemonsets' },
  Job: { group: 'batch', version: 'v1', resource: 'jobs' },
  CronJob: { group: 'batch', version: 'v1', resource: 'cronjobs' },
  ConfigMap: { group: '', version: 'v1', resource: 'configmaps' },
};

export function pod(spec: Json, labels: Record<string, string> = { app: 'web' }): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'team-a', creationTimestamp: null, labels },
    spec,
    status: {},
  };
}

export function deployment(podSpec: Json, templateLabels: Record<string, string> = { app: 'web' }): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: templateLabels }, spec: podSpec } },
  };
}

export function cronJob(podSpec: Json, templateLabels: Record<string, string> = { app: 'nightly' }): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'nightly', namespace: 'team-a', labels: { app: 'nightly' } },
    spec: {
      schedule: '0 3 * * *',
      jobTemplate: { spec: { template: { metadata: { labels: templateLabels }, spec: { restartPolicy: 'OnFailure', ...podSpec } } } },
    },
  };
}

export interface RequestOptions {
  operation?: Operation;
  oldObject?: KubeObject | null;
  namespace?: string;
}

/** An AdmissionRequest like the examples of local-cluster/CONTRACT.md 1.3 (CREATE unless told otherwise). */
export function admissionRequest(object: KubeObject | null, options: RequestOptions = {}): AdmissionRequest {
  const kind = object?.kind ?? options.oldObject?.kind ?? 'Pod';
  const [group, version] = (object?.apiVersion ?? options.oldObject?.apiVersion ?? 'v1').includes('/')
    ? ((object?.apiVersion ?? options.oldObject?.apiVersion) as string).split('/')
    : ['', 'v1'];
  const gvk = { group: group ?? '', version: version ?? 'v1', kind };
  const gvr = RESOURCES[kind] ?? { group: gvk.group, version: gvk.version, resource: `${kind.toLowerCase()}s` };
  const operation = options.operation ?? 'CREATE';
  const optionsKind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: undefined }[operation];
  return {
    uid: randomUUID(),
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: object?.metadata?.name ?? options.oldObject?.metadata?.name ?? 'web',
    namespace: options.namespace ?? 'team-a',
    operation,
    userInfo: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
    object,
    oldObject: options.oldObject ?? null,
    dryRun: false,
    options: optionsKind ? { kind: optionsKind, apiVersion: 'meta.k8s.io/v1' } : null,
  };
}

const HEADER = 'apiVersion: kube-admission-server/v1\nkind: Policy\n';

/** The webhooks of a policy file made of `body` (the `webhooks:` part and anything after the header). */
export function webhooksFrom(body: string, options: PolicyOptions = {}): Webhook[] {
  const result = parsePolicy(HEADER + body, 'test.yaml', options);
  if (!result.ok) throw new Error(`test policy is invalid:\n${result.errors.join('\n')}`);
  return result.webhooks;
}

/** The one webhook of a policy file with a single entry. */
export function webhookFrom(body: string, options: PolicyOptions = {}): Webhook {
  const [webhook, ...rest] = webhooksFrom(body, options);
  if (!webhook || rest.length > 0) throw new Error('expected exactly one webhook');
  return webhook;
}

/** Calls a webhook's handler the way the server does. */
export async function review(webhook: Webhook, request: AdmissionRequest): Promise<MutationDecision> {
  const { handler: _handler, ...spec } = webhook;
  const context = { signal: new AbortController().signal, dryRun: request.dryRun, webhook: spec, log: pino({ level: 'silent' }), metrics: handlerMetrics(new Registry()) };
  return webhook.type === 'validating' ? webhook.handler(request, context) : webhook.handler(request, context);
}
