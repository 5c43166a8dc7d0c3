/**
 * A Pod's volumes as directories under the pod's own directory: emptyDir, and configMap, secret,
 * downwardAPI and projected volumes written the way kubelet writes them (AtomicWriter: a
 * timestamped directory, the `..data` symlink swapped atomically, one symlink per key), with
 * defaultMode, items and optional. They are rewritten when their ConfigMap or Secret changes.
 * Other volume types (hostPath, persistentVolumeClaim, ...) cannot be mounted here: the Pod stays
 * in ContainerCreating with a FailedMount event naming the volume.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AtomicWriter, type Payload } from '../../util/atomic-writer.js';
import type { KubeObject } from '../../fake-apiserver/index.js';
import { fieldRefValue } from './container-env.js';
import { rec, records, specOf } from '../workload-objects.js';

type Json = Record<string, unknown>;

export interface VolumeSources {
  configMap(namespace: string, name: string): KubeObject | undefined;
  secret(namespace: string, name: string): KubeObject | undefined;
  /** The Pod's service-account token (a projected serviceAccountToken source). */
  serviceAccountToken(): string;
}

/** Why a volume cannot be set up; the message of the FailedMount event. */
export class MountError extends Error {}

function configMapData(configMap: KubeObject): Record<string, Buffer> {
  const data: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(rec(configMap.data))) data[key] = Buffer.from(String(value), 'utf8');
  for (const [key, value] of Object.entries(rec(configMap.binaryData))) data[key] = Buffer.from(String(value), 'base64');
  return data;
}

function secretData(secret: KubeObject): Record<string, Buffer> {
  const data: Record<string, Buffer> = {};
  for (const [key, value] of Object.entries(rec(secret.data))) data[key] = Buffer.from(String(value), 'base64');
  return data;
}

/** `items` pick keys onto paths; without them every key is a file of its own name. */
function project(data: Record<string, Buffer>, items: Json[], what: string): Payload {
  if (items.length === 0) return { ...data };
  const payload: Payload = {};
  for (const item of items) {
    const key = String(item.key ?? '');
    const value = data[key];
    if (value === undefined) throw new MountError(`configuration error: key "${key}" not found in ${what}`);
    payload[String(item.path ?? key)] = value;
  }
  return payload;
}

export class PodVolumes {
  readonly #writers = new Map<string, AtomicWriter>();

  constructor(
    private readonly pod: KubeObject,
    private readonly podDir: string,
    private readonly sources: VolumeSources,
  ) {}

  hostPath(volume: string): string {
    return join(this.podDir, 'volumes', volume);
  }

  private volumes(): Json[] {
    return records(specOf(this.pod).volumes);
  }

  /** Creates every volume; throws MountError for the first one that cannot be set up. */
  async setUp(): Promise<void> {
    for (const volume of this.volumes()) {
      const name = String(volume.name ?? '');
      if (isRecord(volume.emptyDir)) {
        await mkdir(this.hostPath(name), { recursive: true, mode: 0o777 });
        continue;
      }
      const payload = this.payloadOf(volume);
      if (payload === undefined) throw new MountError(`volume "${name}": the local kubelet mounts only emptyDir, configMap, secret, downwardAPI and projected volumes`);
      await this.writer(volume).write(payload);
    }
  }

  /** Rewrites the volumes that come from API objects (a ConfigMap or Secret changed). */
  async refresh(): Promise<void> {
    for (const volume of this.volumes()) {
      if (isRecord(volume.emptyDir)) continue;
      const payload = this.payloadOf(volume);
      if (payload !== undefined) await this.writer(volume).write(payload);
    }
  }

  /** Whether the Pod mounts this ConfigMap or Secret. */
  uses(kind: 'configmaps' | 'secrets', name: string): boolean {
    const field = kind === 'configmaps' ? 'configMap' : 'secret';
    const nameField = kind === 'configmaps' ? 'name' : 'secretName';
    return this.volumes().some(
      (v) =>
        (isRecord(v[field]) && v[field][nameField] === name) ||
        records(rec(v.projected).sources).some((s) => isRecord(s[field]) && s[field].name === name),
    );
  }

  async remove(): Promise<void> {
    await rm(join(this.podDir, 'volumes'), { recursive: true, force: true });
  }

  private writer(volume: Json): AtomicWriter {
    const name = String(volume.name ?? '');
    let writer = this.#writers.get(name);
    if (!writer) {
      const source = rec(volume.configMap ?? volume.secret ?? volume.downwardAPI ?? volume.projected);
      const mode = typeof source.defaultMode === 'number' ? source.defaultMode : 0o644;
      writer = new AtomicWriter(this.hostPath(name), mode);
      this.#writers.set(name, writer);
    }
    return writer;
  }

  private payloadOf(volume: Json): Payload | undefined {
    const namespace = this.pod.metadata?.namespace ?? '';
    if (isRecord(volume.configMap)) return this.configMapPayload(namespace, volume.configMap);
    if (isRecord(volume.secret)) return this.secretPayload(namespace, volume.secret);
    if (isRecord(volume.downwardAPI)) return this.downwardPayload(volume.downwardAPI);
    if (isRecord(volume.projected)) {
      const payload: Payload = {};
      for (const source of records(volume.projected.sources)) {
        if (isRecord(source.configMap)) Object.assign(payload, this.configMapPayload(namespace, source.configMap));
        else if (isRecord(source.secret)) Object.assign(payload, this.secretPayload(namespace, { ...source.secret, secretName: source.secret.name }));
        else if (isRecord(source.downwardAPI)) Object.assign(payload, this.downwardPayload(source.downwardAPI));
        else if (isRecord(source.serviceAccountToken)) payload[String(source.serviceAccountToken.path ?? 'token')] = this.sources.serviceAccountToken();
      }
      return payload;
    }
    return undefined;
  }

  private configMapPayload(namespace: string, source: Json): Payload {
    const name = String(source.name ?? '');
    const configMap = this.sources.configMap(namespace, name);
    if (!configMap) {
      if (source.optional === true) return {};
      throw new MountError(`configmap "${name}" not found`);
    }
    return project(configMapData(configMap), records(source.items), `configmap "${name}"`);
  }

  private secretPayload(namespace: string, source: Json): Payload {
    const name = String(source.secretName ?? '');
    const secret = this.sources.secret(namespace, name);
    if (!secret) {
      if (source.optional === true) return {};
      throw new MountError(`secret "${name}" not found`);
    }
    return project(secretData(secret), records(source.items), `secret "${name}"`);
  }

  private downwardPayload(source: Json): Payload {
    const payload: Payload = {};
    for (const item of records(source.items)) {
      const fieldPath = String(rec(item.fieldRef).fieldPath ?? '');
      payload[String(item.path ?? '')] = fieldRefValue(this.pod, fieldPath) ?? '';
    }
    return payload;
  }
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
