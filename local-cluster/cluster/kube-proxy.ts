/**
 * kube-proxy, as the admission caller meets it: a Service's ClusterIP is translated to a ready
 * endpoint when a connection is opened (iptables DNAT), picked at random, or, when every endpoint
 * is terminating, to one still serving (its readiness probe passing: KEP-1669, GA in 1.28); a kept-alive connection
 * then stays on the Pod it reached until that Pod closes it, as with conntrack, and a Pod's FIN
 * reaches the caller directly (no user-space hop to add latency). Endpoint changes take effect
 * after `syncDelayMs` (kube-proxy's rule sync); open connections are not cut.
 *
 * The resolver answers as kube-apiserver's ClusterIP service resolver does when it dials:
 * `service "x" not found`, `no service port 443 found for service "x"`, and a refused connection
 * to the ClusterIP when the Service has no ready endpoint (kube-proxy rejects those).
 */
import type { Agent } from 'node:https';
import { Socket, type NetConnectOpts } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { randomInt } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { GoTransportAgent } from '../admission-caller/go-transport-agent.js';
import type { ServiceEndpoint } from '../admission-caller/index.js';
import type { ObjectStore } from '../fake-apiserver/index.js';
import { SERVICE_NAME_LABEL } from './endpoints-controller.js';
import { rec, records, specOf } from './workload-objects.js';

interface Backend {
  ip: string;
  port: number;
}

const portKey = (namespace: string, name: string, port: number): string => `${namespace}/${name}:${port}`;

export class KubeProxy {
  #backends = new Map<string, Backend[]>();
  #syncTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  /** Connections opened per endpoint (`ip:port`), for tests and the CLI. */
  readonly connections = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly syncDelayMs = 250,
  ) {}

  start(): void {
    this.#unsubscribe = this.store.subscribe((event) => {
      if (event.resource === 'endpointslices' || event.resource === 'services') this.scheduleSync();
    });
    this.syncBackends();
  }

  private scheduleSync(): void {
    if (this.#syncTimer) return;
    this.#syncTimer = setTimeout(() => {
      this.#syncTimer = undefined;
      this.syncBackends();
    }, this.syncDelayMs);
    this.#syncTimer.unref();
  }

  /** The endpoints each Service port routes to, from the EndpointSlices. */
  private syncBackends(): void {
    const next = new Map<string, Backend[]>();
    for (const service of this.store.list('services')) {
      const meta = service.metadata ?? {};
      const slices = this.store.list('endpointslices', meta.namespace).filter((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === meta.name);
      for (const servicePort of records(specOf(service).ports)) {
        const ready: Backend[] = [];
        const servingTerminating: Backend[] = [];
        for (const slice of slices) {
          const ports = records(slice.ports);
          const target = ports.find((p) => (p.name ?? '') === (servicePort.name ?? '')) ?? (ports.length === 1 ? ports[0] : undefined);
          if (!target || typeof target.port !== 'number') continue;
          for (const endpoint of records(slice.endpoints)) {
            const conditions = rec(endpoint.conditions);
            const into = conditions.ready === true ? ready : conditions.serving === true && conditions.terminating === true ? servingTerminating : undefined;
            for (const ip of Array.isArray(endpoint.addresses) ? endpoint.addresses.map(String) : []) into?.push({ ip, port: target.port });
          }
        }
        // KEP-1669 (GA in 1.28): when every endpoint is terminating, traffic goes to those still serving.
        const backends = ready.length > 0 ? ready : servingTerminating;
        next.set(portKey(meta.namespace ?? '', meta.name ?? '', Number(servicePort.port)), backends);
      }
    }
    this.#backends = next;
  }

  /** The admission caller's ServiceResolver: the ClusterIP and port to dial. */
  resolve(namespace: string, name: string, port: number): ServiceEndpoint {
    const service = this.store.get('services', namespace, name);
    if (!service) throw new Error(`service "${name}" not found`);
    const spec = specOf(service);
    if (spec.clusterIP === 'None') throw new Error('cannot route to service with ClusterIP "None"');
    if (!records(spec.ports).some((p) => Number(p.port) === port)) throw new Error(`no service port ${port} found for service "${name}"`);
    const clusterIp = String(spec.clusterIP ?? '');
    if ((this.#backends.get(portKey(namespace, name, port)) ?? []).length === 0) {
      throw new Error(`dial tcp ${clusterIp}:${port}: connect: connection refused`);
    }
    return { host: clusterIp, port };
  }

  /** The endpoint a new connection to `<name>.<namespace>.svc:port` goes to, picked at random. */
  route(serverName: string | undefined, port: number): Backend | undefined {
    const m = /^([^.]+)\.([^.]+)\.svc$/.exec(serverName ?? '');
    if (!m) return undefined;
    const backends = this.#backends.get(portKey(m[2] ?? '', m[1] ?? '', port)) ?? [];
    const backend = backends[randomInt(Math.max(1, backends.length))];
    if (backend) this.connections.set(`${backend.ip}:${backend.port}`, (this.connections.get(`${backend.ip}:${backend.port}`) ?? 0) + 1);
    return backend;
  }

  /** A keep-alive HTTPS agent whose new connections to a Service go to one of its endpoints. */
  agent(): Agent {
    return new ServiceAgent(this);
  }

  close(): void {
    this.#unsubscribe?.();
    if (this.#syncTimer) clearTimeout(this.#syncTimer);
  }
}

/** kube-apiserver's pooled connections to ClusterIPs, translated when they are opened. */
class ServiceAgent extends GoTransportAgent {
  constructor(private readonly proxy: KubeProxy) {
    super();
  }

  override createConnection(options: NetConnectOpts & ConnectionOptions, callback?: (error: Error | null, socket: Duplex) => void): Duplex | null | undefined {
    const port = Number((options as { port?: number }).port ?? 443);
    const backend = this.proxy.route(options.servername, port);
    if (!backend) {
      // No ready endpoint any more: kube-proxy rejects the SYN.
      const socket = new Socket();
      const error = Object.assign(new Error(`connect ECONNREFUSED ${String((options as { host?: string }).host)}:${port}`), { code: 'ECONNREFUSED' });
      process.nextTick(() => socket.destroy(error));
      return socket;
    }
    return super.createConnection({ ...options, host: backend.ip, port: backend.port }, callback);
  }
}
