/**
 * The endpoints and EndpointSlice controllers: for each Service with a selector, the Pods it
 * selects that have an IP, with the Service's target ports resolved against each Pod's container
 * ports (by number or name). Endpoints lists ready Pods as addresses and unready ones as
 * notReadyAddresses, terminating Pods not at all; the EndpointSlice keeps terminating Pods with
 * their ready/serving/terminating conditions, as kube-proxy reads them.
 */
import type { KubeObject } from '../fake-apiserver/index.js';
import { selectorMatches } from '../fake-apiserver/label-selector.js';
import { isNotFound, type ClusterClient } from './api-client.js';
import { isPodReady, podPhase, rec, records, specOf, statusOf } from './workload-objects.js';
import type { SyncResult } from './work-queue.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface EndpointPort {
  name?: string;
  port: number;
  protocol: string;
}

/** A Service port's targetPort on one Pod: a number, or a named container port. */
function targetPortOn(pod: KubeObject, servicePort: Record<string, unknown>): number | undefined {
  const target = servicePort.targetPort ?? servicePort.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(String(target))) return Number(target);
  for (const container of records(specOf(pod).containers)) {
    const port = records(container.ports).find((p) => p.name === target);
    if (port && typeof port.containerPort === 'number') return port.containerPort;
  }
  return undefined;
}

function portsOn(pod: KubeObject, service: KubeObject): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const servicePort of records(specOf(service).ports)) {
    const port = targetPortOn(pod, servicePort);
    if (port === undefined) continue;
    ports.push({ ...(typeof servicePort.name === 'string' && servicePort.name !== '' ? { name: servicePort.name } : {}), port, protocol: String(servicePort.protocol ?? 'TCP') });
  }
  return ports;
}

const targetRef = (pod: KubeObject): Record<string, unknown> => ({ kind: 'Pod', namespace: pod.metadata?.namespace, name: pod.metadata?.name, uid: pod.metadata?.uid });

export class EndpointsController {
  constructor(private readonly client: ClusterClient) {}

  private selected(service: KubeObject): KubeObject[] {
    const selector = rec(specOf(service).selector) as Record<string, string>;
    if (Object.keys(selector).length === 0) return [];
    return this.client
      .list('pods', service.metadata?.namespace)
      .filter((pod) => selectorMatches({ matchLabels: selector }, pod.metadata?.labels ?? {}))
      .filter((pod) => typeof statusOf(pod).podIP === 'string' && statusOf(pod).podIP !== '' && podPhase(pod) !== 'Succeeded' && podPhase(pod) !== 'Failed');
  }

  async sync(namespace: string, name: string): Promise<SyncResult> {
    const service = this.client.get({ resource: 'services', namespace, name });
    if (!service) {
      // Endpoints have no owner reference: the controller removes them with their Service.
      await this.client.delete({ resource: 'endpoints', namespace, name }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
      return;
    }
    if (Object.keys(rec(specOf(service).selector)).length === 0) return;
    const pods = this.selected(service);
    await this.writeEndpoints(service, pods);
    await this.writeSlice(service, pods);
    return undefined;
  }

  private async writeEndpoints(service: KubeObject, pods: KubeObject[]): Promise<void> {
    const live = pods.filter((pod) => !pod.metadata?.deletionTimestamp);
    const address = (pod: KubeObject): Record<string, unknown> => ({ ip: statusOf(pod).podIP, nodeName: specOf(pod).nodeName, targetRef: targetRef(pod) });
    const first = live[0];
    const ready = live.filter(isPodReady).map(address);
    const notReady = live.filter((pod) => !isPodReady(pod)).map(address);
    const subsets =
      first === undefined
        ? []
        : [{ ...(ready.length > 0 ? { addresses: ready } : {}), ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}), ports: portsOn(first, service) }];
    const ref = { resource: 'endpoints', namespace: service.metadata?.namespace, name: service.metadata?.name ?? '' };
    const existing = this.client.get(ref);
    const labels = { ...(service.metadata?.labels ?? {}), 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' };
    if (!existing) {
      await this.client.create('endpoints', ref.namespace, { metadata: { name: ref.name, namespace: ref.namespace, labels }, subsets });
    } else if (JSON.stringify(existing.subsets ?? []) !== JSON.stringify(subsets)) {
      await this.client.update(ref, { ...existing, subsets });
    }
  }

  private async writeSlice(service: KubeObject, pods: KubeObject[]): Promise<void> {
    const meta = service.metadata ?? {};
    const endpoints = pods.map((pod) => {
      const terminating = pod.metadata?.deletionTimestamp !== undefined;
      const ready = isPodReady(pod);
      return {
        addresses: [String(statusOf(pod).podIP)],
        conditions: { ready: ready && !terminating, serving: ready, terminating },
        nodeName: specOf(pod).nodeName,
        targetRef: targetRef(pod),
      };
    });
    const first = pods[0];
    const ports = first ? portsOn(first, service) : [];
    const existing = this.client.list('endpointslices', meta.namespace).find((slice) => slice.metadata?.labels?.[SERVICE_NAME_LABEL] === meta.name);
    if (!existing) {
      await this.client.create('endpointslices', meta.namespace, {
        metadata: {
          generateName: `${meta.name ?? ''}-`,
          namespace: meta.namespace,
          labels: { [SERVICE_NAME_LABEL]: meta.name ?? '', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: meta.name ?? '', uid: meta.uid ?? '', controller: true, blockOwnerDeletion: true }],
        },
        addressType: 'IPv4',
        endpoints,
        ports,
      });
      return;
    }
    if (JSON.stringify(existing.endpoints ?? []) === JSON.stringify(endpoints) && JSON.stringify(existing.ports ?? []) === JSON.stringify(ports)) return;
    await this.client.update({ resource: 'endpointslices', namespace: meta.namespace, name: existing.metadata?.name ?? '' }, { ...existing, endpoints, ports }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
}
