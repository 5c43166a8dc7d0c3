import type { V1EndpointSlice } from '@kubernetes/client-node';
import { request } from 'node:https';
import { isIP } from 'node:net';
import type { KubeApi } from '../kube/client.js';
import { callApi } from '../kube/request-deadline.js';
import { SERVICE_NAME_LABEL, type ServiceRef } from './service-endpoints.js';

/** One ready endpoint of the Service: where kube-apiserver's calls land through the ClusterIP. */
export interface ReplicaAddress {
  address: string;
  port: number;
}

/**
 * What one replica said it serves: the entry names per type; or why it could not say (unreachable,
 * an older version without the endpoint: such a replica does not hold a registration back).
 */
export type ReplicaEntries = { replica: ReplicaAddress; entries: { validating: string[]; mutating: string[] } } | { replica: ReplicaAddress; unknown: string };

/** The ready endpoints of the Service on its webhook port (`portName`, or a slice's only port). */
export function readyReplicas(slices: readonly V1EndpointSlice[], portName: string): ReplicaAddress[] {
  const replicas: ReplicaAddress[] = [];
  for (const slice of slices) {
    const ports = slice.ports ?? [];
    const port = (ports.find((p) => (p.name ?? '') === portName) ?? (ports.length === 1 ? ports[0] : undefined))?.port;
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses) replicas.push({ address, port });
    }
  }
  return replicas;
}

export async function listReadyReplicas(api: KubeApi, service: ServiceRef, portName: string, signal: AbortSignal): Promise<ReplicaAddress[]> {
  const slices = await callApi(signal, (o) => api.discovery.listNamespacedEndpointSlice({ namespace: service.namespace, labelSelector: `${SERVICE_NAME_LABEL}=${service.name}` }, o));
  return readyReplicas(slices.items, portName);
}

export interface EntriesProbeOptions {
  path: string;
  /** `<service>.<namespace>.svc`: the name kube-apiserver verifies, verified here the same way. */
  serverName: string;
  caBundlePem: string;
  timeoutMs: number;
  signal: AbortSignal;
}

/** Asks one replica which entries it serves, over TLS verified as kube-apiserver verifies it. */
export function probeReplicaEntries(replica: ReplicaAddress, options: EntriesProbeOptions): Promise<ReplicaEntries> {
  return new Promise((resolve) => {
    const unknown = (why: string): void => resolve({ replica, unknown: why });
    const call = request(
      {
        host: replica.address,
        port: replica.port,
        path: options.path,
        method: 'GET',
        servername: isIP(options.serverName) ? undefined : options.serverName,
        ca: options.caBundlePem,
        minVersion: 'TLSv1.2',
        timeout: options.timeoutMs,
        signal: options.signal,
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => unknown(error.message));
        response.on('end', () => {
          if (response.statusCode !== 200) return unknown(`HTTP ${response.statusCode}`);
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { validating?: unknown; mutating?: unknown };
            const names = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
            resolve({ replica, entries: { validating: names(body.validating), mutating: names(body.mutating) } });
          } catch {
            unknown('not JSON');
          }
        });
      },
    );
    call.on('timeout', () => call.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
    call.on('error', (error) => unknown(error.message));
    call.end();
  });
}
