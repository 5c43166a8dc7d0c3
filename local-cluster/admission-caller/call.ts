/** One webhook call: where to connect, the review out, the verified response back, or a CallError. */
import type { Agent } from 'node:https';
import { posix } from 'node:path';
import { CallError } from './outcomes.js';
import { CallFailure, decodeReply } from './decode.js';
import { buildReview, chooseReviewVersion, type ReviewContext } from './review.js';
import type { Webhook } from './select.js';
import { TransportError, postReview, type CallTarget } from './transport.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';
import { InvalidResponseError, UndecodableResponseError, verifyResponse, type VerifiedResponse } from './verify.js';

export interface Invocation {
  configuration: string;
  hook: Webhook;
}

export interface CallSpec {
  invocation: Invocation;
  phase: 'mutating' | 'validating';
  round: number;
  request: AdmitRequest;
  context: ReviewContext;
  /** performance.now() at which the user's request runs out. */
  parentDeadline: number;
  /** The kube-apiserver that calls. */
  apiserver: string;
}

/** Go's path.Join("/", p): cleaned, no trailing slash. */
export function cleanPath(path: string | undefined): string {
  const joined = posix.normalize(`/${path ?? ''}`);
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

export function targetFor(hook: Webhook, timeoutSeconds: number, resolveService: ServiceResolver): CallTarget {
  const ca = hook.clientConfig.caBundle ? Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8') : undefined;
  const query = `?timeout=${timeoutSeconds}s`;
  const service = hook.clientConfig.service;
  if (service) {
    const port = service.port ?? 443;
    const serverName = `${service.name}.${service.namespace}.svc`;
    const path = cleanPath(service.path);
    const url = `https://${serverName}:${port}${path}${query}`;
    // The apiserver resolves the Service when it dials, so a resolver error reads as a failed Post.
    let endpoint: ReturnType<ServiceResolver>;
    try {
      endpoint = resolveService(service.namespace, service.name, port);
    } catch (error) {
      throw new Error(`Post "${url}": ${(error as Error).message}`);
    }
    return {
      url,
      connectHost: endpoint.host,
      connectPort: endpoint.port,
      serverName,
      ca,
      requestPath: `${path}${query}`,
      hostHeader: `${serverName}:${port}`,
    };
  }
  if (!hook.clientConfig.url) throw new CallError('webhook has neither url nor service');
  const url = new URL(hook.clientConfig.url);
  const path = cleanPath(url.pathname);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    url: `${url.protocol}//${url.host}${path}${query}`,
    connectHost: host,
    connectPort: url.port === '' ? 443 : Number(url.port),
    serverName: host,
    ca,
    requestPath: `${path}${query}`,
    hostHeader: url.host,
  };
}

/** Runs `step`, turning the listed error classes into a CallError with `prefix`. */
async function asCallError<T>(prefix: string, kinds: (new (message: string) => Error)[], step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (kinds.some((kind) => error instanceof kind)) throw new CallError(`${prefix}${(error as Error).message}`);
    throw error;
  }
}

async function exchange(spec: CallSpec, agent: Agent, resolveService: ServiceResolver, record: CallRecord): Promise<VerifiedResponse> {
  const { hook } = spec.invocation;
  const version = chooseReviewVersion(hook.admissionReviewVersions);
  if (!version) throw new CallError('webhook does not accept v1 or v1beta1 AdmissionReview');
  // The call gets timeoutSeconds or what is left of the user's request, whichever is less.
  const callMs = Math.ceil(Math.min((hook.timeoutSeconds ?? 10) * 1000, Math.max(0, spec.parentDeadline - performance.now())));
  const target = await asCallError('failed to call webhook: ', [Error], () => targetFor(hook, Math.max(1, Math.ceil(callMs / 1000)), resolveService));
  record.url = target.url;
  const review = buildReview(version, spec.request, spec.context);
  const reply = await asCallError('failed to call webhook: ', [TransportError], () =>
    postReview(agent, target, review.body, AbortSignal.timeout(Math.max(1, callMs))),
  );
  const decoded = await asCallError('failed to call webhook: ', [CallFailure], () => decodeReply(reply));
  return asCallError('failed to call webhook: ', [UndecodableResponseError], () =>
    asCallError('received invalid webhook response: ', [InvalidResponseError], () =>
      verifyResponse(decoded, review.uid, version, spec.phase === 'mutating'),
    ),
  );
}

/** Calls one webhook and records the call in `calls`. */
export async function callWebhook(spec: CallSpec, agent: Agent, resolveService: ServiceResolver, calls: CallRecord[]): Promise<VerifiedResponse> {
  const record: CallRecord = {
    apiserver: spec.apiserver,
    configuration: spec.invocation.configuration,
    webhook: spec.invocation.hook.name,
    phase: spec.phase,
    round: spec.round,
    url: '',
    startedAt: performance.now(),
    endedAt: 0,
    outcome: 'error',
    failurePolicy: spec.invocation.hook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    namespace: spec.context.namespace,
    name: spec.context.name,
    warnings: [],
  };
  calls.push(record);
  try {
    const verified = await exchange(spec, agent, resolveService, record);
    record.outcome = verified.allowed ? 'allowed' : 'denied';
    record.warnings = verified.warnings;
    return verified;
  } catch (error) {
    record.error = (error as Error).message;
    throw error;
  } finally {
    record.endedAt = performance.now();
  }
}
