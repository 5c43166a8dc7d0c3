/**
 * The defaults kube-apiserver fills into Pods, Deployments, ReplicaSets and Services
 * (pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go), as far as the local cluster and
 * kubectl read them, plus what the ServiceAccount admission plugin sets.
 */
import { createHash } from 'node:crypto';
import { isRecord, type KubeObject } from './objects.js';

type Json = Record<string, unknown>;

const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** `:latest` or no tag pulls Always; a tag or digest IfNotPresent. */
function pullPolicyFor(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.split('/').at(-1) ?? '';
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(probe: unknown): void {
  if (!isRecord(probe)) return;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (isRecord(probe.httpGet)) probe.httpGet.scheme ??= 'HTTP';
}

function defaultContainer(container: Json): void {
  if (typeof container.image === 'string') container.imagePullPolicy ??= pullPolicyFor(container.image);
  container.terminationMessagePath ??= '/dev/termination-log';
  container.terminationMessagePolicy ??= 'File';
  container.resources ??= {};
  for (const port of records(container.ports)) port.protocol ??= 'TCP';
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) defaultProbe(probe);
}

export function defaultPodSpec(spec: Json): void {
  spec.restartPolicy ??= 'Always';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  // The ServiceAccount admission plugin.
  spec.serviceAccountName ??= 'default';
  for (const container of [...records(spec.containers), ...records(spec.initContainers)]) defaultContainer(container);
  for (const volume of records(spec.volumes)) {
    if (isRecord(volume.secret)) volume.secret.defaultMode ??= 0o644;
    if (isRecord(volume.configMap)) volume.configMap.defaultMode ??= 0o644;
  }
}

export function defaultPod(pod: KubeObject): void {
  if (isRecord(pod.spec)) defaultPodSpec(pod.spec);
}

function defaultTemplate(spec: Json): void {
  const template = spec.template;
  if (isRecord(template) && isRecord(template.spec)) defaultPodSpec(template.spec);
}

export function defaultDeployment(deployment: KubeObject): void {
  if (!isRecord(deployment.spec)) return;
  const spec = deployment.spec;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  const strategy = isRecord(spec.strategy) ? spec.strategy : (spec.strategy = {});
  strategy.type ??= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const rolling = isRecord(strategy.rollingUpdate) ? strategy.rollingUpdate : (strategy.rollingUpdate = {});
    rolling.maxUnavailable ??= '25%';
    rolling.maxSurge ??= '25%';
  }
  defaultTemplate(spec);
}

export function defaultReplicaSet(replicaSet: KubeObject): void {
  if (!isRecord(replicaSet.spec)) return;
  replicaSet.spec.replicas ??= 1;
  defaultTemplate(replicaSet.spec);
}

export function defaultService(service: KubeObject): void {
  if (!isRecord(service.spec)) return;
  const spec = service.spec;
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  spec.internalTrafficPolicy ??= 'Cluster';
  for (const port of records(spec.ports)) {
    port.protocol ??= 'TCP';
    port.targetPort ??= port.port;
  }
}

/**
 * A ClusterIP from 10.96.0.0/16, derived from the Service's namespace and name. kube-apiserver
 * allocates them from a bitmap; here the address only labels the Service (the local kube-proxy
 * routes by name), so a hash is enough.
 */
export function allocateClusterIp(service: KubeObject): void {
  if (!isRecord(service.spec) || (service.spec.type ?? 'ClusterIP') !== 'ClusterIP' || service.spec.clusterIP === 'None') return;
  if (typeof service.spec.clusterIP === 'string' && service.spec.clusterIP !== '') return;
  const digest = createHash('sha256').update(`${service.metadata?.namespace ?? ''}/${service.metadata?.name ?? ''}`).digest();
  const ip = `10.96.${digest[0] ?? 0}.${((digest[1] ?? 0) % 253) + 2}`;
  service.spec.clusterIP = ip;
  service.spec.clusterIPs = [ip];
  service.spec.ipFamilies = ['IPv4'];
  service.spec.ipFamilyPolicy = 'SingleStack';
}
