/**
 * The webhook's Service as kube-apiserver reaches it. Endpoints are the replicas that reported
 * ready and have not been signalled: a replica leaves them the moment it gets SIGTERM or SIGKILL
 * (in a cluster the endpoints controller does this a little later; --shutdown-delay covers the
 * gap). Each admission goes to the next endpoint in turn (kube-proxy picks one per connection;
 * per admission is the same spread) over that endpoint's own keep-alive connections.
 *
 * A call that fails in transport (refused, reset, EOF) because its endpoint has gone is sent
 * again to another endpoint, as a new connection through the Service would reach a live pod.
 * Such retries are counted, never hidden: a transport failure on an endpoint that was still up is
 * a failure, and so is every other wrong outcome.
 */
import { createAdmissionCaller, type AdmissionCaller, type AdmitRequest, type AdmitResult } from '../../../local-cluster/admission-caller/index.js';
import type { FakeApiServer } from '../../../local-cluster/fake-apiserver/index.js';
import { isTransportFailure } from './workload.js';

export interface Endpoint {
  podName: string;
  port: number;
  caller: AdmissionCaller;
  /** Set when the replica is signalled: no new admissions, and its transport failures are retried. */
  gone: boolean;
}

export interface ServedAdmission {
  result: AdmitResult;
  /** Extra attempts because the endpoint went away mid-call. */
  retries: number;
  endpoint: string;
}

const MAX_ATTEMPTS = 4;

export class ServiceModel {
  readonly #api: Pick<FakeApiServer, 'store'>;
  readonly #endpoints: Endpoint[] = [];
  #next = 0;

  constructor(api: Pick<FakeApiServer, 'store'>) {
    this.#api = api;
  }

  /** A ready replica joins the endpoints. */
  add(podName: string, port: number): void {
    const caller = createAdmissionCaller({ api: this.#api, resolveService: () => ({ host: '127.0.0.1', port }) });
    this.#endpoints.push({ podName, port, caller, gone: false });
  }

  /** A signalled replica leaves the endpoints; its connections are closed once it has exited. */
  remove(podName: string, exited: Promise<unknown>): void {
    const endpoint = this.#endpoints.find((e) => e.podName === podName && !e.gone);
    if (!endpoint) return;
    endpoint.gone = true;
    void exited.then(async () => {
      this.#endpoints.splice(this.#endpoints.indexOf(endpoint), 1);
      await endpoint.caller.close();
    });
  }

  live(): string[] {
    return this.#endpoints.filter((e) => !e.gone).map((e) => e.podName);
  }

  #pick(): Endpoint {
    const live = this.#endpoints.filter((e) => !e.gone);
    const endpoint = live[this.#next++ % Math.max(1, live.length)];
    if (!endpoint) throw new Error('the Service has no ready endpoint');
    return endpoint;
  }

  async admit(request: AdmitRequest): Promise<ServedAdmission> {
    for (let attempt = 0; ; attempt++) {
      const endpoint = this.#pick();
      const result = await endpoint.caller.admit(request);
      if (!(endpoint.gone && isTransportFailure(result)) || attempt + 1 >= MAX_ATTEMPTS) {
        return { result, retries: attempt, endpoint: endpoint.podName };
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#endpoints.splice(0).map((e) => e.caller.close()));
  }
}
