/**
 * The HTTPS front of the double: authentication, routing, RBAC, fault injection, request log,
 * then the REST handlers or a watch.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sleep } from '../../../src/util/abort.js';
import type { FaultRegistry, Fault } from './faults.js';
import { isAllowed, DEFAULT_RBAC_USER, type RbacPolicy } from './rbac.js';
import type { RequestLog, RequestRecord } from './request-log.js';
import {
  handleCreate,
  handleDelete,
  handleGet,
  handleList,
  handlePatch,
  handleUpdate,
  objectFilter,
  type ApiRequest,
  type Reply,
} from './rest-handlers.js';
import { parseApiPath, verbOf, type ApiTarget } from './routes.js';
import type { Verb } from './resources.js';
import {
  conflict,
  forbidden,
  methodNotAllowed,
  pathNotFound,
  requestEntityTooLarge,
  serverFault,
  unauthorized,
  internalError,
} from './status.js';
import type { ObjectStore } from './store.js';
import { startWatch, type WatchStream } from './watch.js';

/** kube-apiserver's default MaxRequestBodyBytes. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface ServerState {
  store: ObjectStore;
  faults: FaultRegistry;
  log: RequestLog;
  token: string;
  rbac: RbacPolicy | undefined;
  watches: Set<WatchStream>;
  /** Aborts when the server closes: ends latency waits and hangs. */
  closing: AbortSignal;
  /** What GET /version reports, e.g. v1.27.16-eks-2f008fe. */
  version: string;
}

/**
 * GET /version as kube-apiserver answers it: `minor` as managed offerings report it ("27+" on EKS
 * and GKE builds). Every client may read it, authenticated or not (system:public-info-viewer),
 * so RBAC is not consulted.
 */
function versionInfo(gitVersion: string): Record<string, string> {
  const match = /^v(\d+)\.(\d+)\.\d+(.*)$/.exec(gitVersion);
  if (!match) throw new Error(`fake apiserver: "${gitVersion}" is not a version like v1.35.2`);
  const [, major, minor, suffix] = match;
  return { major: major!, minor: `${minor}${suffix ? '+' : ''}`, gitVersion, gitCommit: '0'.repeat(40), gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'go1.25.0', compiler: 'gc', platform: 'linux/amd64' };
}

function sendJson(response: ServerResponse, reply: Reply, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(reply.body);
  response.writeHead(reply.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
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

function isAuthenticated(request: IncomingMessage, token: string): boolean {
  return request.headers.authorization === `Bearer ${token}`;
}

function dispatch(state: ServerState, verb: Verb, api: ApiRequest): Reply {
  switch (verb) {
    case 'get':
      return handleGet(state.store, api);
    case 'list':
      return handleList(state.store, api);
    case 'create':
      return handleCreate(state.store, api);
    case 'update':
      return handleUpdate(state.store, api);
    case 'patch':
      return handlePatch(state.store, api);
    case 'delete':
      return handleDelete(state.store, api);
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

async function handle(state: ServerState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'https://fake-apiserver');
  const entry = record(state, request, url);
  response.on('finish', () => state.log.end(entry, response.statusCode));
  response.on('close', () => state.log.end(entry, response.writableFinished ? response.statusCode : undefined));

  const body = await readBody(request);
  if (!isAuthenticated(request, state.token)) return sendJson(response, { status: 401, body: unauthorized() });
  if (body === undefined) {
    return sendJson(response, { status: 413, body: requestEntityTooLarge(`limit is ${MAX_BODY_BYTES}`) });
  }
  if (url.pathname === '/version' && request.method === 'GET') return sendJson(response, { status: 200, body: versionInfo(state.version) });
  const target = parseApiPath(url.pathname);
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
  if (state.rbac && !isAllowed(state.rbac, authorization)) {
    return sendJson(response, { status: 403, body: forbidden({ ...authorization, user: state.rbac.user ?? DEFAULT_RBAC_USER }) });
  }
  if (verb === 'deletecollection' || !target.type.verbs.includes(verb) || target.subresource !== undefined) {
    return sendJson(response, { status: 405, body: methodNotAllowed() });
  }
  const fault = state.faults.take({ resource: target.type.resource, verb, name: target.name, namespace: target.namespace });
  if (fault) {
    entry.fault = fault;
    if (await applyFault(fault, target, request, response, state.closing)) return;
  }
  const api: ApiRequest = {
    target,
    query: url.searchParams,
    contentType: request.headers['content-type'] ?? '',
    body,
    userAgent: request.headers['user-agent'] ?? '',
  };
  if (verb === 'watch') {
    const filter = objectFilter(url.searchParams);
    if (typeof filter !== 'function') return sendJson(response, filter);
    const holder: { stream?: WatchStream; ended?: boolean } = {};
    holder.stream = startWatch(state.store, target, url.searchParams, filter, response, () => {
      holder.ended = true;
      if (holder.stream) state.watches.delete(holder.stream);
    });
    if (!holder.ended) state.watches.add(holder.stream);
    return;
  }
  sendJson(response, dispatch(state, verb, api));
}

export function requestListener(state: ServerState): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    handle(state, request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, { status: 500, body: internalError(String(error)) });
      else response.destroy();
    });
  };
}
