/**
 * The other role of kube-apiserver: for one request, call the registered webhooks as the
 * apiserver would (contract sections 1 to 3) and return what the user would see.
 */
import { Agent } from 'node:https';
import { posix } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { randomBytes, randomUUID } from 'node:crypto';
import jsonPatch from 'fast-json-patch';
import type { FakeApiServer, KubeObject, StatusBody } from '../fake-apiserver/index.js';
import { clone, isRecord, kubeTime } from '../fake-apiserver/objects.js';
import { internalError, statusBody } from '../fake-apiserver/status.js';
import { AuditAnnotations, WarningCollector } from './annotations.js';
import { CallFailure, decodeReply } from './decode.js';
import { buildReview, chooseReviewVersion } from './review.js';
import { isExemptResource, namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type Webhook } from './select.js';
import { TransportError, postReview, type CallTarget } from './transport.js';
import type { AdmitRequest, AdmitResult, CallRecord, ServiceResolver } from './types.js';
import { InvalidResponseError, UndecodableResponseError, verifyResponse, type VerifiedResponse } from './verify.js';

export type * from './types.js';

export interface AdmissionCallerOptions {
  api: Pick<FakeApiServer, 'store'>;
  resolveService: ServiceResolver;
}

export interface AdmissionCaller {
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Every webhook call so far, with performance.now() timestamps. */
  readonly calls: readonly CallRecord[];
  close(): Promise<void>;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 34_000;
const NO_SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

interface Invocation {
  configuration: string;
  hook: Webhook;
}

/** A failed call of one webhook: failurePolicy decides. */
class CallError extends Error {}

/** An outcome that ends admission no matter the failurePolicy. */
class FinalStatus extends Error {
  constructor(readonly status: StatusBody) {
    super(status.message);
  }
}

function denial(hookName: string, status: Record<string, unknown> | undefined): StatusBody {
  const deniedBy = `admission webhook "${hookName}" denied the request`;
  const message = typeof status?.message === 'string' ? status.message : '';
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const state = status?.status === 'Failure' ? 'Failure' : status?.status === undefined || status.status === '' || status.status === 'Success' ? 'Failure' : (status.status as 'Failure');
  const text = message !== '' ? `${deniedBy}: ${message}` : reason !== '' ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  return statusBody({
    status: state,
    message: text,
    reason: reason === '' ? undefined : reason,
    details: isRecord(status?.details) ? (status.details as StatusBody['details']) : undefined,
    code,
  });
}

function timeoutStatus(): StatusBody {
  return statusBody({ status: 'Failure', message: 'Timeout: request did not complete within requested timeout', reason: 'Timeout', details: {}, code: 504 });
}

/** Go's path.Join("/", p): cleaned, no trailing slash. */
function cleanPath(path: string | undefined): string {
  const joined = posix.normalize(`/${path ?? ''}`);
  return joined.length > 1 && joined.endsWith('/') ? joined.slice(0, -1) : joined;
}

function hooksOf(object: KubeObject): Webhook[] {
  return Array.isArray(object.webhooks) ? (object.webhooks as Webhook[]) : [];
}

export function createAdmissionCaller(options: AdmissionCallerOptions): AdmissionCaller {
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 25 });
  const calls: CallRecord[] = [];
  const store = options.api.store;

  function targetFor(hook: Webhook, timeoutSeconds: number): CallTarget {
    const ca = hook.clientConfig.caBundle ? Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8') : undefined;
    const query = `?timeout=${timeoutSeconds}s`;
    const service = hook.clientConfig.service;
    if (service) {
      const port = service.port ?? 443;
      const serverName = `${service.name}.${service.namespace}.svc`;
      const path = cleanPath(service.path);
      const endpoint = options.resolveService(service.namespace, service.name, port);
      return {
        url: `https://${serverName}:${port}${path}${query}`,
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

  /** One call: review out, verified response back, or CallError. */
  async function callWebhook(
    invocation: Invocation,
    phase: 'mutating' | 'validating',
    round: number,
    request: AdmitRequest,
    context: { namespace: string; name: string; object: KubeObject | undefined; oldObject: KubeObject | undefined },
    parentDeadline: number,
  ): Promise<VerifiedResponse> {
    const { hook } = invocation;
    const record: CallRecord = {
      configuration: invocation.configuration,
      webhook: hook.name,
      phase,
      round,
      url: '',
      startedAt: performance.now(),
      endedAt: 0,
      outcome: 'error',
    };
    calls.push(record);
    try {
      const version = chooseReviewVersion(hook.admissionReviewVersions);
      if (!version) throw new CallError(`webhook does not accept v1 or v1beta1 AdmissionReview`);
      const remainingMs = Math.max(0, parentDeadline - performance.now());
      const callMs = Math.min((hook.timeoutSeconds ?? 10) * 1000, remainingMs);
      let target: CallTarget;
      try {
        target = targetFor(hook, Math.max(1, Math.ceil(callMs / 1000)));
      } catch (error) {
        throw error instanceof CallError ? error : new CallError(`failed to call webhook: ${(error as Error).message}`);
      }
      record.url = target.url;
      const review = buildReview(version, request, context);
      let reply;
      try {
        reply = await postReview(agent, target, review.body, AbortSignal.timeout(Math.max(1, Math.ceil(callMs))));
      } catch (error) {
        if (error instanceof TransportError) throw new CallError(`failed to call webhook: ${error.message}`);
        throw error;
      }
      let decoded: unknown;
      try {
        decoded = decodeReply(reply);
      } catch (error) {
        if (error instanceof CallFailure) throw new CallError(`failed to call webhook: ${error.message}`);
        throw error;
      }
      let verified: VerifiedResponse;
      try {
        verified = verifyResponse(decoded, review.uid, version, phase === 'mutating');
      } catch (error) {
        if (error instanceof InvalidResponseError) throw new CallError(`received invalid webhook response: ${error.message}`);
        if (error instanceof UndecodableResponseError) throw new CallError(`failed to call webhook: ${error.message}`);
        throw error;
      }
      record.outcome = verified.allowed ? 'allowed' : 'denied';
      return verified;
    } catch (error) {
      record.error = (error as Error).message;
      throw error;
    } finally {
      record.endedAt = performance.now();
    }
  }

  function matchingInvocations(resource: 'mutatingwebhookconfigurations' | 'validatingwebhookconfigurations', request: AdmitRequest, namespace: string): Invocation[] {
    const invocations: Invocation[] = [];
    for (const configuration of store.list(resource)) {
      for (const hook of hooksOf(configuration)) {
        if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, request, namespace))) continue;
        const namespaceMatch = namespaceSelectorMatches(hook, request, namespace, store);
        if (typeof namespaceMatch !== 'boolean') throw new FinalStatus(namespaceMatch);
        if (!namespaceMatch || !objectSelectorMatches(hook, request)) continue;
        if ((hook.matchConditions ?? []).length > 0) {
          throw new Error(`webhook "${hook.name}" has matchConditions: the test double does not evaluate CEL`);
        }
        invocations.push({ configuration: configuration.metadata?.name ?? '', hook });
      }
    }
    return invocations;
  }

  function checkDryRun(request: AdmitRequest, hook: Webhook): void {
    if (request.dryRun && !NO_SIDE_EFFECTS.includes(hook.sideEffects ?? '')) {
      throw new FinalStatus(statusBody({ status: 'Failure', message: `admission webhook "${hook.name}" does not support dry run`, reason: 'BadRequest', code: 400 }));
    }
  }

  function applyWebhookPatch(hookName: string, object: KubeObject | undefined, patch: string | undefined): KubeObject | undefined {
    if (patch === undefined) return object;
    let operations: unknown;
    try {
      operations = JSON.parse(patch);
    } catch {
      throw new CallError('received undecodable patch in webhook response');
    }
    if (!Array.isArray(operations)) throw new CallError('received undecodable patch in webhook response');
    if (operations.length === 0) return object;
    if (object === undefined) {
      throw new FinalStatus(internalError(`admission webhook "${hookName}" attempted to modify the object, which is not supported for this operation`));
    }
    try {
      return jsonPatch.applyPatch(clone(object), operations as jsonPatch.Operation[], true, false).newDocument;
    } catch (error) {
      throw new FinalStatus(internalError((error as Error).message.split('\n')[0] ?? 'patch failed'));
    }
  }

  async function admit(request: AdmitRequest): Promise<AdmitResult> {
    const warnings = new WarningCollector();
    const audit = new AuditAnnotations();
    const parentDeadline = performance.now() + (request.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    const isNamespaceObject = request.resource.group === '' && request.resource.resource === 'namespaces';
    const source = request.object ?? request.oldObject;
    const name = request.name ?? source?.metadata?.name ?? '';
    const namespace = request.namespace ?? (isNamespaceObject ? name : (source?.metadata?.namespace ?? ''));
    let object = request.object === undefined ? undefined : clone(request.object);
    const oldObject = request.oldObject === undefined ? undefined : clone(request.oldObject);
    if (request.operation === 'CREATE' && object) {
      const meta = (object.metadata ??= {});
      for (const key of ['uid', 'resourceVersion', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds']) delete meta[key];
      meta.creationTimestamp = null;
    }
    const denied = (status: StatusBody): AdmitResult => ({ allowed: false, status, warnings: warnings.result(), auditAnnotations: audit.values });
    if (isExemptResource(request)) return { allowed: true, object, warnings: [], auditAnnotations: {} };

    try {
      const mutating = matchingInvocations('mutatingwebhookconfigurations', request, namespace);
      const reinvocable = new Set<Invocation>();
      let toReinvoke = new Set<Invocation>();
      for (const round of [0, 1]) {
        for (const [index, invocation] of mutating.entries()) {
          if (round === 1 && !toReinvoke.has(invocation)) continue;
          checkDryRun(request, invocation.hook);
          const annotationKey = `round_${round}_index_${index}`;
          let response: VerifiedResponse;
          try {
            response = await callWebhook(invocation, 'mutating', round, request, { namespace, name, object, oldObject }, parentDeadline);
          } catch (error) {
            if (!(error instanceof CallError)) throw error;
            const message = `failed calling webhook "${invocation.hook.name}": ${error.message}`;
            if (invocation.hook.failurePolicy !== 'Ignore') return denied(internalError(message));
            if (performance.now() >= parentDeadline) return denied(timeoutStatus());
            audit.set(`failed-open.mutation.webhook.admission.k8s.io/${annotationKey}`, invocation.hook.name);
            continue;
          }
          warnings.add(response.warnings);
          audit.addFromWebhook(invocation.hook.name, response.auditAnnotations);
          if (!response.allowed) return denied(denial(invocation.hook.name, response.status));
          let patched: KubeObject | undefined;
          try {
            patched = applyWebhookPatch(invocation.hook.name, object, response.patch);
          } catch (error) {
            if (!(error instanceof CallError)) throw error;
            const message = `failed calling webhook "${invocation.hook.name}": ${error.message}`;
            if (invocation.hook.failurePolicy !== 'Ignore') return denied(internalError(message));
            continue;
          }
          const changed = !isDeepStrictEqual(patched, object);
          object = patched;
          audit.set(
            `mutation.webhook.admission.k8s.io/${annotationKey}`,
            JSON.stringify({ configuration: invocation.configuration, webhook: invocation.hook.name, mutated: changed }),
          );
          if (round === 0 && invocation.hook.reinvocationPolicy === 'IfNeeded') reinvocable.add(invocation);
          if (round === 0 && changed) toReinvoke = new Set(reinvocable);
        }
        if (toReinvoke.size === 0) break;
      }

      if (request.operation === 'CREATE' && object) {
        // Validating webhooks run after the store filled in the system fields.
        const meta = (object.metadata ??= {});
        if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomBytes(3).toString('hex').slice(0, 5)}`;
        meta.uid = randomUUID();
        meta.creationTimestamp = kubeTime();
      }

      const validating = matchingInvocations('validatingwebhookconfigurations', request, namespace);
      if (validating.length > 0 && performance.now() >= parentDeadline) return denied(timeoutStatus());
      for (const invocation of validating) checkDryRun(request, invocation.hook);
      const errors: StatusBody[] = [];
      await Promise.all(
        validating.map(async (invocation, index) => {
          try {
            const response = await callWebhook(invocation, 'validating', 0, request, { namespace, name, object, oldObject }, parentDeadline);
            warnings.add(response.warnings);
            audit.addFromWebhook(invocation.hook.name, response.auditAnnotations);
            if (!response.allowed) errors.push(denial(invocation.hook.name, response.status));
          } catch (error) {
            if (!(error instanceof CallError)) throw error;
            if (invocation.hook.failurePolicy === 'Ignore') {
              audit.set(`failed-open.validating.webhook.admission.k8s.io/round_0_index_${index}`, invocation.hook.name);
              return;
            }
            errors.push(internalError(`failed calling webhook "${invocation.hook.name}": ${error.message}`));
          }
        }),
      );
      // Only the first error to arrive is returned, as with the apiserver's error channel.
      const first = errors[0];
      if (first) return denied(first);
      return { allowed: true, object, warnings: warnings.result(), auditAnnotations: audit.values };
    } catch (error) {
      if (error instanceof FinalStatus) return denied(error.status);
      throw error;
    }
  }

  return {
    admit,
    get calls() {
      return calls.map((c) => ({ ...c }));
    },
    close: async () => {
      agent.destroy();
    },
  };
}
