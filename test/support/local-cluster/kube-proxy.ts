/**
 * kube-proxy for the admission caller: each Service port is a TCP listener on 127.0.0.1 (its
 * "ClusterIP") that forwards every new connection to a ready endpoint picked at random, so
 * kube-apiserver's kept-alive connections stay on the Pod they reached until it closes them, as
 * with iptables DNAT and conntrack. Endpoint changes reach the proxy after `syncDelayMs`
 * (kube-proxy's rule sync); connections already open are not cut.
 *
 * The resolver answers as kube-apiserver's ClusterIP service resolver does when it dials:
 * `service "x" not found`, `no service port 443 found for service "x"`, and a refused connection
 * when the Service has no ready endpoint (kube-proxy rejects those).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { randomInt } from 'node:crypto';
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
  readonly #listeners = new Map<string, { server: Server; port?: number }>();
  readonly #sockets = new Set<Socket>();
  #backends = new Map<string, Backend[]>();
  #syncTimer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  /** Connections forwarded, per Service port (for tests and the CLI's summary). */
  readonly connections = new Map<string, number>();

  constructor(
    private readonly store: ObjectStore,
    private readonly syncDelayMs = 250,
  ) {}

  start(): void {
    this.#unsubscribe = this.store.subscribe((event) => {
      if (event.resource === 'services') this.syncListeners();
      if (event.resource === 'endpointslices' || event.resource === 'services') this.scheduleSync();
    });
    this.syncListeners();
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

  /** The ready endpoints of every Service port, from the EndpointSlices. */
  private syncBackends(): void {
    const next = new Map<string, Backend[]>();
    for (const service of this.store.list('services')) {
      const meta = service.metadata ?? {};
      const slices = this.store.list('endpointslices', meta.namespace).filter((s) => s.metadata?.labels?.[SERVICE_NAME_LABEL] === meta.name);
      for (const servicePort of records(specOf(service).ports)) {
        const backends: Backend[] = [];
        for (const slice of slices) {
          const ports = records(slice.ports);
          const target = ports.find((p) => (p.name ?? '') === (servicePort.name ?? '')) ?? (ports.length === 1 ? ports[0] : undefined);
          if (!target || typeof target.port !== 'number') continue;
          for (const endpoint of records(slice.endpoints)) {
            if (rec(endpoint.conditions).ready !== true) continue;
            for (const ip of Array.isArray(endpoint.addresses) ? endpoint.addresses.map(String) : []) backends.push({ ip, port: target.port });
          }
        }
        next.set(portKey(meta.namespace ?? '', meta.name ?? '', Number(servicePort.port)), backends);
      }
    }
    this.#backends = next;
  }

  /** One listener per Service port; those of deleted Services close. */
  private syncListeners(): void {
    const wanted = new Set<string>();
    for (const service of this.store.list('services')) {
      for (const servicePort of records(specOf(service).ports)) {
        const key = portKey(service.metadata?.namespace ?? '', service.metadata?.name ?? '', Number(servicePort.port));
        wanted.add(key);
        if (!this.#listeners.has(key)) this.listen(key);
      }
    }
    for (const [key, listener] of this.#listeners) {
      if (!wanted.has(key)) {
        listener.server.close();
        this.#listeners.delete(key);
      }
    }
  }

  private listen(key: string): void {
    const server = createServer((client) => this.forward(key, client));
    const entry: { server: Server; port?: number } = { server };
    this.#listeners.set(key, entry);
    server.on('error', () => this.#listeners.delete(key));
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address && typeof address === 'object') entry.port = address.port;
    });
  }

  private forward(key: string, client: Socket): void {
    this.#sockets.add(client);
    client.on('close', () => this.#sockets.delete(client));
    const backends = this.#backends.get(key) ?? [];
    const backend = backends[randomInt(Math.max(1, backends.length))];
    if (!backend) {
      client.destroy();
      return;
    }
    this.connections.set(key, (this.connections.get(key) ?? 0) + 1);
    const upstream = connect(backend.port, backend.ip);
    this.#sockets.add(upstream);
    upstream.on('close', () => {
      this.#sockets.delete(upstream);
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** The admission caller's ServiceResolver. */
  resolve(namespace: string, name: string, port: number): ServiceEndpoint {
    const service = this.store.get('services', namespace, name);
    if (!service) throw new Error(`service "${name}" not found`);
    const spec = specOf(service);
    if (spec.clusterIP === 'None') throw new Error('cannot route to service with ClusterIP "None"');
    if (!records(spec.ports).some((p) => Number(p.port) === port)) throw new Error(`no service port ${port} found for service "${name}"`);
    const key = portKey(namespace, name, port);
    const listener = this.#listeners.get(key);
    if ((this.#backends.get(key) ?? []).length === 0 || listener?.port === undefined) {
      throw new Error(`dial tcp ${String(spec.clusterIP ?? '')}:${port}: connect: connection refused`);
    }
    return { host: '127.0.0.1', port: listener.port };
  }

  async close(): Promise<void> {
    this.#unsubscribe?.();
    if (this.#syncTimer) clearTimeout(this.#syncTimer);
    for (const socket of this.#sockets) socket.destroy();
    await Promise.all(
      [...this.#listeners.values()].map((l) => new Promise<void>((resolve) => l.server.close(() => resolve()))),
    );
    this.#listeners.clear();
  }
}
