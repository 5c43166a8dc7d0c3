/**
 * A Kubernetes API test double: HTTPS with its own CA, bearer-token auth, the REST store of the
 * resources the admission server uses, RBAC mode, fault injection and a request log. Built from
 * /work/shared/APISERVER-CONTRACT.md; the admission caller (../admission-caller) plays its other role.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { writeKubeconfig } from '../util/kubeconfig.js';
import { createCertificateAuthority, issueServerCertificate } from './certs.js';
import { serveCustomResources } from './custom-resources.js';
import { FaultRegistry, type Fault, type FaultMatch, type FaultOptions } from './faults.js';
import { startGarbageCollector, type GarbageCollector } from './garbage-collector.js';
import { TokenAuthenticator, type UserInfo } from './identity.js';
import type { PodLogSource } from './pod-logs.js';
import type { RbacPolicy } from './rbac.js';
import { RequestLog, type RequestPhase, type RequestRecord } from './request-log.js';
import { internalRequest, requestListener, type InternalRequest, type ServerState } from './server.js';
import type { Reply } from './rest-common.js';
import { ObjectStore } from './store.js';
import type { WatchStream } from './watch.js';
import { NO_ADMISSION, type WriteAdmission } from './write-admission.js';
import { ControlPlane, type KubeApiServer, type KubeApiServerInstance, type KubeApiServerOptions } from './kube-apiservers.js';
import { DEFAULT_VERSION } from './version-info.js';

export interface FakeApiServerOptions {
  /** The bearer token clients must send; random by default. */
  token?: string;
  rbac?: RbacPolicy;
  host?: string;
  /** 0 (default): any free port. */
  port?: number;
  /** Namespaces to create besides default, kube-system, kube-public and kube-node-lease. */
  namespaces?: string[];
  /**
   * Honour finalizers and graceful deletion (deletionTimestamp first, removal later), for when a
   * garbage collector, a namespace controller and a kubelet run (the local cluster). Default:
   * deletes are immediate, as a double without controllers must do.
   */
  finalizers?: boolean;
  /** What GET /version reports; default v1.35.2. A suffix (v1.27.16-eks-1) makes minor "27+". */
  version?: string;
  /**
   * The control plane's kube-apiservers over the one store (contract 6a): a count, or each one's
   * options (its informer caches' propagation lag). Default: one, with no lag.
   */
  apiservers?: number | readonly KubeApiServerOptions[];
}

export interface FakeApiServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** The CA that signed the serving certificate: the only thing clients should trust. */
  caPem: string;
  token: string;
  store: ObjectStore;
  /** The kube-apiservers behind `url`, each with its own caches; a connection stays with the one it reached. */
  readonly apiservers: readonly KubeApiServer[];
  faults: {
    add(match: FaultMatch, fault: Fault, options?: FaultOptions): void;
    clear(): void;
  };
  /** A snapshot of every request so far, in arrival order. */
  readonly requests: readonly RequestRecord[];
  /** Client connections open now, across the kube-apiservers (the request log numbers them as they open). */
  readonly openConnections: number;
  /**
   * Resolves with the first request matching `predicate`, already seen or future: finished ones by
   * default, or merely routed ones with `phase: 'started'` (an open watch). Default deadline 10 s.
   */
  waitForRequest(
    predicate: (record: RequestRecord) => boolean,
    options?: { timeoutMs?: number; signal?: AbortSignal; phase?: RequestPhase },
  ): Promise<RequestRecord>;
  /** undefined: every request with the double's token is allowed. */
  setRbac(policy: RbacPolicy | undefined): void;
  /** Runs admission on every write through the API (the webhook caller); NO_ADMISSION turns it off. */
  setAdmission(admission: WriteAdmission): void;
  /** Where `pods/<name>/log` reads from. */
  setPodLogs(source: PodLogSource | undefined): void;
  /**
   * A request from inside the control plane as `user`: authorization, admission and store rules
   * apply. Served by the next kube-apiserver that is up, or by the one at index `via`.
   */
  request(user: UserInfo, request: InternalRequest, via?: number): Promise<Reply>;
  /** A new bearer token for `user`; its requests are authorized by the RBAC objects in the store. */
  issueToken(user: UserInfo): string;
  revokeToken(token: string): void;
  /**
   * Turns on the garbage collector (off by default: see garbage-collector.ts). It belongs to the
   * controller manager, not to the apiserver: close() and reopen() leave it running; stop() ends it.
   */
  startGarbageCollector(): GarbageCollector;
  writeKubeconfig(path: string, options?: { namespace?: string; token?: string; name?: string }): Promise<void>;
  /** Ends watches, destroys open sockets (hanging requests included), stops listening. */
  close(): Promise<void>;
  /**
   * After close(): listens again on the same port with the same store, CA, token and request log,
   * as a restarted kube-apiserver backed by the same etcd (kubeconfigs stay valid).
   */
  reopen(): Promise<void>;
}

interface Incarnation {
  port: number;
  closing: AbortSignal;
  close(state: ServerState): Promise<void>;
}

/** One listening life of the double: its server, its sockets, and the signal that ends its waits. */
async function listenOnce(
  serving: { cert: string; key: string },
  listener: ReturnType<typeof requestListener>,
  host: string,
  port: number,
  controlPlane: ControlPlane,
): Promise<Incarnation> {
  const server: Server = createServer({ ...serving, minVersion: 'TLSv1.2' }, listener);
  // Every TCP connection, from accept on: one still in its TLS handshake when the server closes
  // would otherwise finish it afterwards, be handed to a kube-apiserver and could open a watch that
  // nothing ends, and close() would wait for it for good (a chaos run hung on that in CI).
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  server.on('connection', track);
  server.on('secureConnection', (socket: Socket) => {
    track(socket);
    controlPlane.assign(socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('fake apiserver has no TCP address');
  const closing = new AbortController();
  return {
    port: address.port,
    closing: closing.signal,
    close: (state) =>
      new Promise<void>((resolve) => {
        closing.abort(new Error('fake apiserver closing'));
        for (const watch of [...state.watches]) watch.end();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }),
  };
}

function apiserverOptions(option: FakeApiServerOptions['apiservers']): readonly KubeApiServerOptions[] {
  if (option === undefined) return [{}];
  if (typeof option !== 'number') return option;
  if (!Number.isInteger(option) || option < 1) throw new Error(`apiservers must be a whole number from 1, got ${option}`);
  return Array.from({ length: option }, () => ({}));
}

const BASE_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export async function startFakeApiServer(options: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  const host = options.host ?? '127.0.0.1';
  const ca = createCertificateAuthority('fake-apiserver-ca');
  const leaf = issueServerCertificate(ca, {
    commonName: 'fake-apiserver',
    dnsNames: ['localhost', 'kubernetes', 'kubernetes.default.svc'],
    ipAddresses: ['127.0.0.1', ...(host !== '127.0.0.1' && /^[\d.]+$/.test(host) ? [host] : [])],
  });
  const store = new ObjectStore();
  for (const name of [...BASE_NAMESPACES, ...(options.namespaces ?? [])]) store.createNamespace(name);
  serveCustomResources(store, { finalizers: options.finalizers ?? false });
  const token = options.token ?? randomBytes(24).toString('hex');
  const controlPlane = new ControlPlane(store, apiserverOptions(options.apiservers));
  const state: ServerState = {
    controlPlane,
    store,
    faults: new FaultRegistry(),
    log: new RequestLog(),
    token,
    authenticator: new TokenAuthenticator(token),
    rbac: options.rbac,
    watches: new Set<WatchStream>(),
    closing: new AbortController().signal,
    admission: NO_ADMISSION,
    finalizers: options.finalizers ?? false,
    serverAddress: '',
    version: options.version ?? DEFAULT_VERSION,
  };
  const listener = requestListener(state);
  const serving = { cert: leaf.certPem, key: leaf.keyPem };
  let incarnation = await listenOnce(serving, listener, host, options.port ?? 0, controlPlane);
  state.closing = incarnation.closing;
  const port = incarnation.port;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  state.serverAddress = `${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closed: Promise<void> | undefined;
  const api: FakeApiServer = {
    url,
    caPem: ca.certPem,
    token: state.token,
    store,
    apiservers: controlPlane.instances,
    faults: {
      add: (match, fault, faultOptions) => state.faults.add(match, fault, faultOptions),
      clear: () => state.faults.clear(),
    },
    get requests() {
      return state.log.all;
    },
    get openConnections() {
      return controlPlane.instances.reduce((open, instance) => open + instance.sockets.size, 0);
    },
    waitForRequest: (predicate, waitOptions = {}) =>
      state.log.waitFor(predicate, {
        timeoutMs: waitOptions.timeoutMs ?? 10_000,
        signal: waitOptions.signal,
        phase: waitOptions.phase,
      }),
    setRbac: (policy) => {
      state.rbac = policy;
    },
    setAdmission: (admission) => {
      state.admission = admission;
    },
    setPodLogs: (source) => {
      state.podLogs = source;
    },
    request: (user, request, via) => internalRequest(state, user, request, via === undefined ? undefined : instanceAt(controlPlane, via)),
    issueToken: (user) => state.authenticator.issue(user),
    revokeToken: (issued) => state.authenticator.revoke(issued),
    startGarbageCollector: () => startGarbageCollector(store),
    writeKubeconfig: (path, kubeconfigOptions = {}) =>
      writeKubeconfig(path, { url, caPem: ca.certPem, token: kubeconfigOptions.token ?? state.token }, kubeconfigOptions),
    close: () => {
      closed ??= incarnation.close(state).then(() => {
        // Every kube-apiserver is down: whatever it cached or pooled is gone.
        for (const instance of controlPlane.instances) instance.stop();
      });
      return closed;
    },
    reopen: async () => {
      if (!closed) throw new Error('fake apiserver: reopen() before close()');
      await closed;
      for (const instance of controlPlane.instances) instance.start();
      incarnation = await listenOnce(serving, listener, host, port, controlPlane);
      state.closing = incarnation.closing;
      closed = undefined;
    },
  };
  return api;
}

function instanceAt(controlPlane: ControlPlane, index: number): KubeApiServerInstance {
  const instance = controlPlane.instances[index];
  if (!instance) throw new Error(`no kube-apiserver ${index}: the control plane has ${controlPlane.instances.length}`);
  return instance;
}

export type { RbacPolicy, PolicyRule, RoleLike } from './rbac.js';
export type { KubeApiServer, KubeApiServerOptions } from './kube-apiservers.js';
export type { AdmissionSource, ParamObjects, WebhookConfigurationResource } from './write-admission.js';
export { storeSource } from './write-admission.js';
export type { Fault, FaultMatch, FaultOptions } from './faults.js';
export type { GarbageCollector } from './garbage-collector.js';
export type { RequestRecord, RequestPhase } from './request-log.js';
export type { KubeObject, ObjectMeta, OwnerReference } from './objects.js';
export type { StatusBody, StatusCause, StatusDetails } from './status.js';
export type { InternalRequest } from './server.js';
export type { Reply } from './rest-common.js';
export type { ResourceName, ResourceType, Verb } from './resources.js';
export type { UserInfo } from './identity.js';
export { ADMIN_USER, serviceAccountUser } from './identity.js';
export type { AdmissionAttributes, AdmissionRun, WriteAdmission } from './write-admission.js';
export { NO_ADMISSION } from './write-admission.js';
export type { PodLogSource, PodLogOptions, PodLogText } from './pod-logs.js';
export { ObjectStore, type StoreEvent } from './store.js';
export { clone, isRecord, kubeTime } from './objects.js';
export { createCertificateAuthority, issueServerCertificate, type CertificateAuthority, type IssuedCertificate } from './certs.js';
