/**
 * The client the local cluster's components use: requests through the double's own pipeline
 * (authorization, admission, validation, the store's rules) as a named user, like
 * kube-controller-manager and the kubelet talk to kube-apiserver.
 */
import type { FakeApiServer, KubeObject, Reply, ResourceType, UserInfo } from '../fake-apiserver/index.js';
import { apiVersionOf } from '../fake-apiserver/resources.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${status}: ${typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : JSON.stringify(body)}`);
  }
}

export interface ObjectRef {
  /** The store key: `pods`, `deployments`, `certificates.cert-manager.io`. */
  resource: string;
  namespace?: string;
  name: string;
}

export class ClusterClient {
  constructor(
    private readonly api: Pick<FakeApiServer, 'request' | 'store'>,
    readonly user: UserInfo,
  ) {}

  type(resource: string): ResourceType {
    return this.api.store.types.get(resource);
  }

  /** Every type served now, custom resources included. */
  types(): ResourceType[] {
    return this.api.store.types.all();
  }

  /** `/api/v1/namespaces/ns/pods[/name[/subresource]]` */
  path(resource: string, namespace: string | undefined, name?: string, subresource?: string): string {
    const type = this.type(resource);
    const prefix = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
    const scope = type.namespaced ? `${prefix}/namespaces/${encodeURIComponent(namespace ?? '')}` : prefix;
    return [scope, type.resource, name, subresource].filter((s) => s !== undefined).map((s) => s).join('/');
  }

  private async send(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, contentType?: string): Promise<Reply> {
    const reply = await this.api.request(this.user, { method, path, body, contentType });
    if (reply.status >= 400) throw new ApiError(reply.status, reply.body);
    return reply;
  }

  /** The stored object, or undefined; reads go to the store (an informer's cache). */
  get(ref: ObjectRef): KubeObject | undefined {
    return this.api.store.get(ref.resource, ref.namespace, ref.name);
  }

  list(resource: string, namespace?: string): KubeObject[] {
    return this.api.store.list(resource, namespace);
  }

  async create(resource: string, namespace: string | undefined, object: KubeObject): Promise<KubeObject> {
    const type = this.type(resource);
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...object };
    return (await this.send('POST', this.path(resource, namespace), body)).body as KubeObject;
  }

  /** POST to a subresource, such as a Pod's binding. */
  async createSubresource(ref: ObjectRef, subresource: string, body: unknown): Promise<unknown> {
    return (await this.send('POST', this.path(ref.resource, ref.namespace, ref.name, subresource), body)).body;
  }

  async update(ref: ObjectRef, object: KubeObject, subresource?: string): Promise<KubeObject> {
    return (await this.send('PUT', this.path(ref.resource, ref.namespace, ref.name, subresource), object)).body as KubeObject;
  }

  /** A JSON merge patch (no resourceVersion: no conflict). */
  async mergePatch(ref: ObjectRef, patch: unknown, subresource?: string): Promise<KubeObject> {
    const path = this.path(ref.resource, ref.namespace, ref.name, subresource);
    return (await this.send('PATCH', path, patch, 'application/merge-patch+json')).body as KubeObject;
  }

  async delete(ref: ObjectRef, options: { propagationPolicy?: string; gracePeriodSeconds?: number; uid?: string } = {}): Promise<void> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (options.propagationPolicy) body.propagationPolicy = options.propagationPolicy;
    if (options.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = options.gracePeriodSeconds;
    if (options.uid) body.preconditions = { uid: options.uid };
    await this.send('DELETE', this.path(ref.resource, ref.namespace, ref.name), body);
  }
}

export const isNotFound = (error: unknown): boolean => error instanceof ApiError && error.status === 404;
export const isConflict = (error: unknown): boolean => error instanceof ApiError && error.status === 409;
