/**
 * The HTTPS front of the double: authentication, discovery, routing, authorization (RBAC),
 * fault injection, request log, then the REST handlers, a watch, or a pod's log.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sleep } from '../util/waits.js';
import { discoveryReply } from './discovery.js';
import type { FaultRegistry, Fault } from './faults.js';
import { isMaster, type TokenAuthenticator, type UserInfo } from './identity.js';
import { podLogOptions, type PodLogSource } from './pod-logs.js';
import { isAllowed, DEFAULT_RBAC_USER, type AuthorizationRequest, type RbacPolicy } from './rbac.js';
import type { RequestLog, RequestRecord } from './request-log.js';
import { fail, type ApiRequest, type Reply, type RestContext } from './rest-common.js';
import { handleDelete } from './rest-delete.js';
import { handleGet, handleList, objectFilter } from './rest-read.js';
import { handleBinding } from './rest-binding.js';
import { handleEviction } from './rest-eviction.js';
import { handleScale } from './rest-scale.js';
import { handleSubjectAccessReview } from './rest-subject-access-review.js';
import { handleCreate, handlePatch, handleUpdate } from './rest-write.js';
import { parseApiPath, verbOf, type ApiTarget } from './routes.js';
import type { TypeRegistry } from './type-registry.js';
import { servedVersion, type Verb } from './resources.js';
import {
  badRequest,
  conflict,
  forbidden,
  methodNotAllowed,
  pathNotFound,
  requestEntityTooLarge,
  serverFault,
  unauthorized,
  internalError,
} from './status.js';
import { storeAllows } from './store-rbac.js';
import type { ObjectStore } from './store.js';
import { readFormat } from './tables.js';
import { startWatch, watchOptionsProblem, type WatchStream } from './watch.js';
import type { WriteAdmission } from './write-admission.js';
import type { ControlPlane, KubeApiServerInstance } from './kube-apiservers.js';

/** kube-apiserver's default MaxRequestBodyBytes. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ServerState {
  store: ObjectStore;
  faults: FaultRegistry;
  log: RequestLog;
  token: string;
  authenticator: TokenAuthenticator;
  /** A static policy for the double's own token (RBAC mode of the server's tests). */
  rbac: RbacPolicy | undefined;
  watches: Set<WatchStream>;
  /** Aborts when the server closes: ends latency waits and hangs. */
  closing: AbortSignal;
  /** Admission on writes; none unless plugged in. */
  admission: WriteAdmission;
  /** Finalizers and graceful deletion honoured (a garbage collector and a kubelet run). */
  finalizers: boolean;
  /** Where `pods/<name>/log` reads from (the local kubelet). */
  podLogs?: PodLogSource;
  /** host:port, as /api advertises it. */
  serverAddress: string;
  /** What GET /version reports, e.g. v1.27.16-eks-2f008fe. */
  version: string;
  /** The kube-apiservers over the store; each request is served by one of them. */
  controlPlane: ControlPlane;
}

/**
 * Go's NewWarningHeader: `299 - "text"` with `"` and `\` escaped, UTF-8 bytes as they are. Node
 * writes header text as latin1 when the body goes as a Buffer (see sendJson), so each UTF-8 byte
 * travels as one latin1 character.
 */
function warningHeader(text: string): string {
  const quoted = `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return Buffer.from(`299 - ${quoted}`, 'utf8').toString('latin1');
}

function sendJson(response: ServerResponse, reply: Reply, headers: Record<string, string> = {}): void {
  if (reply.raw) {
    response.writeHead(reply.status, { 'Content-Type': reply.raw.contentType, 'Content-Length': reply.raw.body.length, ...headers });
    response.end(reply.raw.body);
    return;
  }
  const text = reply.text ?? JSON.stringify(reply.body);
  const warnings = reply.warnings ?? [];
  response.writeHead(reply.status, {
    'Content-Type': reply.text === undefined ? 'application/json' : 'text/plain',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...(warnings.length > 0 ? { Warning: warnings.map(warningHeader) } : {}),
    ...headers,
  });
  // A Buffer, not a string: Node writes the head with a string body in the body's encoding
  // (utf8), which would encode the Warning headers' UTF-8 bytes a second time.
  response.end(Buffer.from(text, 'utf8'));
}

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/**
 * kube-apiserver's RequestInfo takes the name of a list or watch from `fieldSelector=metadata.name=X`,
 * so that RBAC resourceNames can restrict them to one object.
 */
function selectedName(verb: string, query: URLSearchParams): string | undefined {
  if (verb !== 'list' && verb !== 'watch') return undefined;
  const terms = (query.get('fieldSelector') ?? '').split(',');
  const byName = terms.map((term) => /^metadata\.name==?(.+)$/.exec(term)?.[1]).filter((name) => name !== undefined);
  return terms.length === 1 && byName.length === 1 ? byName[0] : undefined;
}

const SUBRESOURCE_VERBS: Readonly<Record<string, readonly Verb[]>> = {
  status: ['get', 'update', 'patch'],
  scale: ['get', 'update', 'patch'],
  log: ['get'],
  finalize: ['update'],
  binding: ['create'],
  eviction: ['create'],
};

/** customresource_handler's justCreated: a create within 2 s of Established waits 2 s, so the other kube-apiservers can catch up. */
const JUST_CREATED_MS = 2000;

/**
 * What the kube-apiserver's handler for a custom resource does before the REST handlers: a type
 * whose CRD the store no longer has is gone (its storage torn down), a fresh one delays creates.
 */
async function customResourceGate(state: ServerState, verb: Verb, api: ApiRequest): Promise<Reply | undefined> {
  const { type } = api.target;
  if (!type.custom) return undefined;
  if (!state.store.types.has(type.key)) return { status: 404, body: pathNotFound() };
  const established = type.custom.establishedAt;
  if (verb === 'create' && api.target.subresource === undefined && established !== undefined && Date.now() - established < JUST_CREATED_MS) {
    await sleep(JUST_CREATED_MS, state.closing).catch(() => undefined);
  }
  return undefined;
}

function withDeprecation(type: ApiRequest['target']['type'], reply: Reply): Reply {
  const warning = type.custom?.deprecationWarning;
  return warning === undefined ? reply : { ...reply, warnings: [warning, ...(reply.warnings ?? [])] };
}

async function dispatch(state: ServerState, verb: Verb, api: ApiRequest, apiserver: KubeApiServerInstance): Promise<Reply> {
  const gated = await customResourceGate(state, verb, api);
  return withDeprecation(api.target.type, gated ?? (await dispatchToHandler(state, verb, api, apiserver)));
}

async function dispatchToHandler(state: ServerState, verb: Verb, api: ApiRequest, apiserver: KubeApiServerInstance): Promise<Reply> {
  // Admission reads the caches of the kube-apiserver that serves the request.
  const admission: WriteAdmission = (attributes) => state.admission({ ...attributes, apiserver });
  const ctx: RestContext = { store: state.store, served: servedVersion(state.version), admission, finalizers: state.finalizers };
  const sub = api.target.subresource;
  if (sub === 'scale') return handleScale(ctx, api, verb as 'get' | 'update' | 'patch');
  if (sub === 'binding') return handleBinding(ctx, api);
  if (sub === 'eviction') return handleEviction(ctx, api);
  if (api.target.type.key === 'subjectaccessreviews') return handleSubjectAccessReview(apiserver.rbac, api);
  switch (verb) {
    case 'get':
      return handleGet(ctx, api);
    case 'list':
      return handleList(ctx, api);
    case 'create':
      return handleCreate(ctx, api);
    case 'update':
      return handleUpdate(ctx, api);
    case 'patch':
      return handlePatch(ctx, api);
    case 'delete':
      return handleDelete(ctx, api);
    default:
      return { status: 405, body: methodNotAllowed() };
  }
}

/** Applies a fault; true when it answered (or dropped) the request itself. */
async function applyFault(fault: Fault, target: ApiTarget, request: IncomingMessage, response: ServerResponse, closing: AbortSignal): Promise<boolean> {
  const gone = AbortSignal.any([closing, abortOnClose(response)]);
  if ('latencyMs' in fault) {
    await sleep(fault.latencyMs, gone).catch(() => undefined);
    return gone.aborted;
  }
  if ('hang' in fault) {
    // Never answers: the client's deadline or the server's close ends it.
    await new Promise<void>((resolve) => gone.addEventListener('abort', () => resolve(), { once: true }));
    response.destroy();
    return true;
  }
  if ('reset' in fault) {
    try {
      request.socket.resetAndDestroy(); // a TCP RST where the socket supports it
    } catch {
      request.socket.destroy();
    }
    return true;
  }
  if ('conflict' in fault) {
    sendJson(response, { status: 409, body: conflict(target.type, target.name ?? '') });
    return true;
  }
  const headers: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(fault.retryAfterSeconds) };
  sendJson(response, { status: fault.status, body: serverFault(fault.status, fault.retryAfterSeconds) }, headers);
  return true;
}

/** The response closes when it is sent or when the client goes away (the request's own close fires after its body). */
function abortOnClose(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort(new Error('client closed the request')));
  return controller.signal;
}

function record(state: ServerState, request: IncomingMessage, url: URL): RequestRecord {
  return state.log.begin({
    method: request.method ?? 'GET',
    path: `${url.pathname}${url.search}`,
    contentType: request.headers['content-type'],
    userAgent: request.headers['user-agent'],
    startedAt: performance.now(),
  });
}

/** system:masters may do anything; the double's token follows the static policy when one is set; others follow the stored RBAC. */
function authorize(state: ServerState, user: UserInfo, token: boolean, request: AuthorizationRequest): { allowed: boolean; user: string } {
  if (token && state.rbac) return { allowed: isAllowed(state.rbac, request), user: state.rbac.user ?? DEFAULT_RBAC_USER };
  if (isMaster(user)) return { allowed: true, user: user.username ?? '' };
  return { allowed: storeAllows(state.store, user, request), user: user.username ?? '' };
}

const OPEN_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

function serveLogs(state: ServerState, api: ApiRequest, response: ServerResponse): void {
  const { namespace = '', name = '' } = api.target;
  if (!state.podLogs) return sendJson(response, { status: 404, body: pathNotFound() });
  const options = podLogOptions(api.query);
  const first = state.podLogs.read(namespace, name, options);
  if ('error' in first) return sendJson(response, { status: 400, body: badRequest(first.error) });
  if (api.query.get('follow') !== 'true') return sendJson(response, { status: 200, body: undefined, text: first.text });
  response.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
  response.write(first.text);
  const stop = state.podLogs.follow(namespace, name, options, (chunk) => response.write(chunk), () => response.end());
  response.on('close', stop);
}

async function handle(state: ServerState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const apiserver = state.controlPlane.serving(request.socket as Socket);
  if (!apiserver) {
    // Its kube-apiserver went down as the request arrived: the connection is gone.
    request.socket.destroy();
    return;
  }
  const url = new URL(request.url ?? '/', 'https://fake-apiserver');
  const entry = record(state, request, url);
  entry.apiserver = apiserver.name;
  entry.connection = state.controlPlane.connectionNumber(request.socket as Socket);
  response.on('finish', () => state.log.end(entry, response.statusCode));
  response.on('close', () => state.log.end(entry, response.writableFinished ? response.statusCode : undefined));

  const body = await readBody(request);
  const user = state.authenticator.authenticate(request.headers.authorization);
  const pathname = url.pathname;
  if (OPEN_PATHS.has(pathname) && pathname !== '/version') return sendJson(response, { status: 200, body: undefined, text: 'ok' });
  if (!user && !OPEN_PATHS.has(pathname)) return sendJson(response, { status: 401, body: unauthorized() });
  if (body === undefined) {
    return sendJson(response, { status: 413, body: requestEntityTooLarge(`limit is ${MAX_BODY_BYTES}`) });
  }
  const types = servedTypes(state, apiserver);
  const discovery = request.method === 'GET' ? discoveryReply(pathname, { types, serverAddress: state.serverAddress, version: state.version, accept: request.headers.accept }) : undefined;
  if (discovery) return sendJson(response, discovery);
  if (!user) return sendJson(response, { status: 401, body: unauthorized() });
  const target = parseApiPath(pathname, types);
  if (!target) return sendJson(response, { status: 404, body: pathNotFound() });
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  const verb = verbOf(request.method ?? 'GET', target, watch);
  Object.assign(entry, {
    verb,
    resource: target.type.resource,
    subresource: target.subresource,
    namespace: target.namespace,
    name: target.name,
  });
  state.log.routed(entry);
  if (verb === undefined) return sendJson(response, { status: 405, body: methodNotAllowed() });
  const authorization = {
    verb,
    group: target.type.group,
    resource: target.type.resource,
    subresource: target.subresource,
    namespace: target.namespace,
    name: target.name ?? selectedName(verb, url.searchParams),
  };
  const decision = authorize(state, user, request.headers.authorization === `Bearer ${state.token}`, authorization);
  if (!decision.allowed) return sendJson(response, { status: 403, body: forbidden({ ...authorization, user: decision.user }) });
  const sub = target.subresource;
  if (sub !== undefined && !target.type.subresources.includes(sub)) return sendJson(response, { status: 404, body: pathNotFound() });
  if (verb === 'deletecollection' || !target.type.verbs.includes(verb) || (sub !== undefined && !(SUBRESOURCE_VERBS[sub] ?? []).includes(verb))) {
    return sendJson(response, { status: 405, body: methodNotAllowed() });
  }
  const fault = state.faults.take({ resource: target.type.resource, verb, name: target.name, namespace: target.namespace, user: user.username });
  if (fault) {
    entry.fault = fault;
    if (await applyFault(fault, target, request, response, state.closing)) return;
  }
  const api: ApiRequest = {
    target,
    query: url.searchParams,
    contentType: request.headers['content-type'] ?? '',
    accept: request.headers.accept,
    body: body.toString('utf8'),
    bytes: body,
    userAgent: request.headers['user-agent'] ?? '',
    user,
  };
  if (sub === 'log') return serveLogs(state, api, response);
  if (verb === 'watch') {
    const problem = watchOptionsProblem(url.searchParams);
    if (problem) return sendJson(response, fail(problem));
    if (target.type.custom && !state.store.types.has(target.type.key)) return sendJson(response, { status: 404, body: pathNotFound() });
    const filter = objectFilter(target.type, url.searchParams);
    if (typeof filter !== 'function') return sendJson(response, filter);
    const holder: { stream?: WatchStream; ended?: boolean } = {};
    holder.stream = startWatch(state.store, target, url.searchParams, filter, response, () => {
      holder.ended = true;
      if (holder.stream) state.watches.delete(holder.stream);
      if (holder.stream) apiserver.watches.delete(holder.stream);
    }, readFormat(request.headers.accept));
    if (!holder.ended) {
      state.watches.add(holder.stream);
      apiserver.watches.add(holder.stream);
    }
    return;
  }
  sendJson(response, await dispatch(state, verb, api, apiserver));
}

export interface InternalRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, as on the wire: `/api/v1/namespaces/ns/pods?labelSelector=a%3Db`. */
  path: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
}

const builtInTypes = new WeakMap<ServerState, TypeRegistry>();

/**
 * The types `apiserver` serves: the built-in ones of the claimed version (a kube-apiserver older
 * than a type's release answers 404 for it) and the custom resources of the CRDs in its cache.
 */
function servedTypes(state: ServerState, apiserver: KubeApiServerInstance): TypeRegistry {
  let builtIn = builtInTypes.get(state);
  if (!builtIn) {
    builtIn = state.store.types.servedAt(servedVersion(state.version).minor).serving([]);
    builtInTypes.set(state, builtIn);
  }
  return apiserver.servedTypes(builtIn);
}

/**
 * A request from a component inside the control plane (a controller, the kubelet): the same
 * routing, authorization, admission and store rules as over HTTPS, without the socket, faults
 * or request log. Watches are not served this way (components subscribe to the store).
 */
export async function internalRequest(state: ServerState, user: UserInfo, request: InternalRequest, via?: KubeApiServerInstance): Promise<Reply> {
  const apiserver = via ?? state.controlPlane.pick();
  if (!apiserver?.up) return { status: 503, body: serverFault(503, undefined) };
  const url = new URL(request.path, 'https://fake-apiserver');
  const target = parseApiPath(url.pathname, servedTypes(state, apiserver));
  if (!target) return { status: 404, body: pathNotFound() };
  const verb = verbOf(request.method, target, false);
  if (verb === undefined || verb === 'deletecollection' || verb === 'watch') return { status: 405, body: methodNotAllowed() };
  const decision = authorize(state, user, false, {
    verb,
    group: target.type.group,
    resource: target.type.resource,
    subresource: target.subresource,
    namespace: target.namespace,
    name: target.name,
  });
  if (!decision.allowed) return { status: 403, body: forbidden({ verb, group: target.type.group, resource: target.type.resource, subresource: target.subresource, namespace: target.namespace, name: target.name, user: decision.user }) };
  const body = request.body === undefined ? '' : typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
  return dispatch(state, verb, {
    target,
    query: url.searchParams,
    contentType: request.contentType ?? 'application/json',
    accept: request.accept,
    body,
    userAgent: `${user.username ?? 'internal'}/local-cluster`,
    user,
  }, apiserver);
}

export function requestListener(state: ServerState): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    handle(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, { status: 500, body: internalError(String(error)) });
      else response.destroy();
    });
  };
}


