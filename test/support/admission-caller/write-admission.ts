/**
 * Plugs the webhook caller into the double's writes: every create, update, patch and delete
 * through the REST API runs the registered webhooks (selection, dispatch, failurePolicy,
 * reinvocation) exactly as `admit` does, split into kube-apiserver's two phases.
 */
import { Agent } from 'node:https';
import type { AdmissionAttributes, AdmissionRun, ObjectStore, WriteAdmission } from '../fake-apiserver/index.js';
import { beginAdmission } from './session.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';

export interface WebhookAdmission {
  admission: WriteAdmission;
  /** Every webhook call so far. */
  readonly calls: readonly CallRecord[];
  /** Destroys the kept-alive connections to the webhooks. */
  close(): void;
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

export function createWebhookAdmission(options: { store: ObjectStore; resolveService: ServiceResolver }): WebhookAdmission {
  // kube-apiserver keeps its webhook connections alive and pools them.
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 25 });
  const calls: CallRecord[] = [];
  const admission: WriteAdmission = (attributes): AdmissionRun => {
    const session = beginAdmission({ store: options.store, agent, resolveService: options.resolveService, calls }, admitRequest(attributes));
    return {
      mutate: async () => {
        const outcome = await session.mutate();
        return outcome.allowed ? { object: outcome.object } : { status: outcome.status };
      },
      validate: async (object) => {
        const outcome = await session.validate(object);
        return outcome.allowed ? undefined : outcome.status;
      },
      warnings: () => session.warnings(),
    };
  };
  return {
    admission,
    get calls() {
      return calls.map((c) => ({ ...c }));
    },
    close: () => agent.destroy(),
  };
}
