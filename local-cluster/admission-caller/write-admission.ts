/**
 * Plugs the webhook caller into the double's writes: every create, update, patch and delete
 * through the REST API runs the registered webhooks (selection, dispatch, failurePolicy,
 * reinvocation) exactly as `admit` does, split into kube-apiserver's two phases.
 */
import type { Agent } from 'node:https';
import { storeSource, type AdmissionAttributes, type AdmissionRun, type ObjectStore, type WriteAdmission } from '../fake-apiserver/index.js';
import { ConnectionPools } from './connection-pools.js';
import { beginAdmission } from './session.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';

const MAX_HISTORY = 1000;

export interface WebhookAdmission {
  admission: WriteAdmission;
  /** The most recent webhook calls (up to 1000), oldest first. */
  readonly calls: readonly CallRecord[];
  /** The audit annotations of the most recent requests that had any (up to 1000), oldest first: what the audit log would record. */
  readonly audits: readonly AuditRecord[];
  /** The connection pools, per kube-apiserver and webhook client configuration. */
  readonly pools: ConnectionPools;
  /** Destroys the kept-alive connections to the webhooks. */
  close(): void;
}

export interface AuditRecord {
  operation: AdmissionAttributes['operation'];
  resource: string;
  namespace: string;
  name: string;
  annotations: Record<string, string>;
}

function admitRequest(attributes: AdmissionAttributes): AdmitRequest {
  const { type } = attributes;
  const scale = attributes.subresource === 'scale';
  return {
    operation: attributes.operation,
    object: attributes.object,
    oldObject: attributes.oldObject,
    kind: scale ? { group: 'autoscaling', version: 'v1', kind: 'Scale' } : { group: type.group, version: type.version, kind: type.kind },
    resource: { group: type.group, version: type.version, resource: type.resource },
    ...(attributes.subresource ? { subResource: attributes.subresource } : {}),
    namespace: attributes.namespace,
    name: attributes.name,
    userInfo: attributes.user,
    dryRun: attributes.dryRun,
    options: attributes.options,
  };
}

export interface WebhookAdmissionOptions {
  store: ObjectStore;
  resolveService: ServiceResolver;
  /** Every failed webhook call (what kube-apiserver logs as "Failed calling webhook"), whatever its failurePolicy made of it. */
  onCallError?: (call: CallRecord) => void;
  /** Every finished webhook call, failed or not (a chaos run judges each one). */
  onCall?: (call: CallRecord) => void;
  /**
   * Makes one connection pool (kube-proxy's translating agent in the local cluster); default
   * kube-apiserver's, GoTransportAgent. Each kube-apiserver gets one per webhook client configuration.
   */
  newAgent?: () => Agent;
}

export function createWebhookAdmission(options: WebhookAdmissionOptions): WebhookAdmission {
  const pools = new ConnectionPools(options.newAgent);
  const history: CallRecord[] = [];
  const audits: AuditRecord[] = [];
  const recordAudit = (attributes: AdmissionAttributes, annotations: Record<string, string>): void => {
    if (Object.keys(annotations).length === 0) return;
    const name = attributes.name || (attributes.object?.metadata?.name ?? '');
    audits.push({ operation: attributes.operation, resource: attributes.type.resource, namespace: attributes.namespace, name, annotations: { ...annotations } });
    if (audits.length > MAX_HISTORY) audits.splice(0, audits.length - MAX_HISTORY);
  };
  const admission: WriteAdmission = (attributes): AdmissionRun => {
    // Each request's calls are its own; finished ones go to a bounded history.
    const calls: CallRecord[] = [];
    // A write through the double's front names its kube-apiserver; without one, the store is read directly.
    const source = attributes.apiserver ?? storeSource(options.store);
    const session = beginAdmission({ source, pools, resolveService: options.resolveService, calls }, admitRequest(attributes));
    const settle = <T>(result: T): T => {
      for (const call of calls.splice(0)) {
        if (call.outcome === 'error') options.onCallError?.(call);
        options.onCall?.(call);
        history.push(call);
      }
      if (history.length > MAX_HISTORY) history.splice(0, history.length - MAX_HISTORY);
      return result;
    };
    return {
      mutate: async () => {
        const outcome = await session.mutate();
        return settle(outcome.allowed ? { object: outcome.object } : { status: outcome.status });
      },
      validate: async (object) => {
        const outcome = await session.validate(object);
        recordAudit(attributes, session.auditAnnotations());
        return settle(outcome.allowed ? undefined : outcome.status);
      },
      warnings: () => session.warnings(),
    };
  };
  return {
    admission,
    get calls() {
      return history.map((c) => ({ ...c }));
    },
    get audits() {
      return audits.map((a) => ({ ...a, annotations: { ...a.annotations } }));
    },
    pools,
    close: () => pools.destroy(),
  };
}
