/**
 * A container's environment as kubelet builds it (kubelet_pods.go makeEnvironmentVariables):
 * envFrom (ConfigMaps and Secrets, with prefix), then env with value, fieldRef (downward API),
 * resourceFieldRef, configMapKeyRef and secretKeyRef, `$(VAR)` references expanded against what
 * is defined before (`$$` escapes).
 */
import type { KubeObject } from '../../fake-apiserver/index.js';
import { rec, records, specOf, statusOf } from '../workload-objects.js';

type Json = Record<string, unknown>;

export interface EnvSources {
  configMap(namespace: string, name: string): KubeObject | undefined;
  secret(namespace: string, name: string): KubeObject | undefined;
}

/** Why the container cannot be created (CreateContainerConfigError). */
export class ContainerConfigError extends Error {}

/** The downward API's fieldPath values. */
export function fieldRefValue(pod: KubeObject, fieldPath: string): string | undefined {
  const meta = pod.metadata ?? {};
  const mapKey = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(fieldPath);
  if (mapKey) return (mapKey[1] === 'labels' ? meta.labels : meta.annotations)?.[mapKey[2] ?? ''] ?? '';
  const mapText = (map: Record<string, string> | undefined): string =>
    Object.entries(map ?? {})
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join('\n');
  const status = statusOf(pod);
  switch (fieldPath) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      return mapText(meta.labels);
    case 'metadata.annotations':
      return mapText(meta.annotations);
    case 'spec.nodeName':
      return String(specOf(pod).nodeName ?? '');
    case 'spec.serviceAccountName':
      return String(specOf(pod).serviceAccountName ?? '');
    case 'status.hostIP':
    case 'status.hostIPs':
      return String(status.hostIP ?? '');
    case 'status.podIP':
    case 'status.podIPs':
      return String(status.podIP ?? '');
    default:
      return undefined;
  }
}

/** Kubernetes quantities to a number of base units (cores, bytes). */
function quantity(value: unknown): number {
  const text = String(value ?? '0');
  const m = /^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(text);
  if (!m) return 0;
  const factors: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return Number(m[1]) * (m[2] ? (factors[m[2]] ?? 1) : 1);
}

function resourceFieldValue(container: Json, ref: Json): string {
  const [kind, resource] = String(ref.resource ?? '').split('.');
  const resources = rec(container.resources);
  const value = rec(resources[kind ?? ''])[resource ?? ''];
  const divisor = quantity(ref.divisor ?? '1') || 1;
  // Unset limits read as the node's allocatable; this node claims 2 cores and 8 GiB.
  const amount = value === undefined ? (resource === 'cpu' ? 2 : 8 * 1024 ** 3) : quantity(value);
  return String(Math.ceil(amount / divisor));
}

/** `$(VAR)` expansion (expansion.go): defined names are replaced, undefined ones kept, `$$` is a literal `$`. */
export function expand(text: string, defined: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([^)]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && Object.prototype.hasOwnProperty.call(defined, name) ? (defined[name] ?? '') : match;
  });
}

function keyRef(sources: EnvSources, pod: KubeObject, ref: Json, kind: 'configMap' | 'secret'): string | undefined {
  const namespace = pod.metadata?.namespace ?? '';
  const name = String(ref.name ?? '');
  const key = String(ref.key ?? '');
  const object = kind === 'configMap' ? sources.configMap(namespace, name) : sources.secret(namespace, name);
  const raw = object === undefined ? undefined : rec(object.data)[key];
  if (raw === undefined) {
    if (ref.optional === true) return undefined;
    throw new ContainerConfigError(object === undefined ? `${kind === 'configMap' ? 'configmap' : 'secret'} "${name}" not found` : `couldn't find key ${key} in ${kind === 'configMap' ? 'ConfigMap' : 'Secret'} ${namespace}/${name}`);
  }
  return kind === 'secret' ? Buffer.from(String(raw), 'base64').toString('utf8') : String(raw);
}

/** The container's variables on top of `base` (what the runtime and kubelet add). */
export function containerEnvironment(pod: KubeObject, container: Json, sources: EnvSources, base: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = { ...base };
  const namespace = pod.metadata?.namespace ?? '';
  for (const from of records(container.envFrom)) {
    const prefix = String(from.prefix ?? '');
    const ref = rec(from.configMapRef ?? from.secretRef);
    const isSecret = from.secretRef !== undefined;
    const object = isSecret ? sources.secret(namespace, String(ref.name ?? '')) : sources.configMap(namespace, String(ref.name ?? ''));
    if (!object) {
      if (ref.optional === true) continue;
      throw new ContainerConfigError(`${isSecret ? 'secret' : 'configmap'} "${String(ref.name ?? '')}" not found`);
    }
    for (const [key, value] of Object.entries(rec(object.data))) {
      env[`${prefix}${key}`] = isSecret ? Buffer.from(String(value), 'base64').toString('utf8') : String(value);
    }
  }
  for (const variable of records(container.env)) {
    const name = String(variable.name ?? '');
    const from = rec(variable.valueFrom);
    let value: string | undefined;
    if (variable.value !== undefined) value = expand(String(variable.value), env);
    else if (from.fieldRef) value = fieldRefValue(pod, String(rec(from.fieldRef).fieldPath ?? ''));
    else if (from.resourceFieldRef) value = resourceFieldValue(container, rec(from.resourceFieldRef));
    else if (from.configMapKeyRef) value = keyRef(sources, pod, rec(from.configMapKeyRef), 'configMap');
    else if (from.secretKeyRef) value = keyRef(sources, pod, rec(from.secretKeyRef), 'secret');
    else value = '';
    if (value !== undefined) env[name] = value;
  }
  return env;
}
