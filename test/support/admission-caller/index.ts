/**
 * The other role of kube-apiserver: for one request, call the registered webhooks as the
 * apiserver would (contract sections 1 to 3) and return what the user would see.
 */
import { Agent } from 'node:https';
import { randomBytes, randomUUID } from 'node:crypto';
import type { FakeApiServer, KubeObject } from '../fake-apiserver/index.js';
import { clone, kubeTime } from '../fake-apiserver/objects.js';
import { AuditAnnotations, WarningCollector } from './annotations.js';
import { fillCreateSystemFields, runMutating, runValidating, type DispatchContext } from './dispatch.js';
import { FinalStatus } from './outcomes.js';
import { isExemptResource } from './select.js';
import type { AdmitRequest, AdmitResult, CallRecord, ServiceResolver } from './types.js';

export type * from './types.js';

export interface AdmissionCallerOptions {
  api: Pick<FakeApiServer, 'store'>;
  resolveService: ServiceResolver;
}

export interface AdmissionCaller {
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Every webhook call so far, with performance.now() timestamps. */
  readonly calls: readonly CallRecord[];
  /** Destroys the kept-alive connections. */
  close(): Promise<void>;
}

/** The create/update/patch/delete handlers bound the user's request to 34 s. */
const DEFAULT_REQUEST_TIMEOUT_MS = 34_000;
const CREATE_WIPED_FIELDS = ['uid', 'resourceVersion', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

/** What the create handler hands to mutating webhooks: no system metadata, creationTimestamp null. */
function wipeForCreate(object: KubeObject): void {
  const meta = (object.metadata ??= {});
  for (const key of CREATE_WIPED_FIELDS) delete meta[key];
  meta.creationTimestamp = null;
}

function requestCoordinates(request: AdmitRequest): { name: string; namespace: string } {
  const isNamespaceObject = request.resource.group === '' && request.resource.resource === 'namespaces';
  const source = request.object ?? request.oldObject;
  const name = request.name ?? source?.metadata?.name ?? '';
  // A Namespace's requests carry its own name as namespace.
  const namespace = request.namespace ?? (isNamespaceObject ? name : (source?.metadata?.namespace ?? ''));
  return { name, namespace };
}

export function createAdmissionCaller(options: AdmissionCallerOptions): AdmissionCaller {
  const agent = new Agent({ keepAlive: true, maxFreeSockets: 25 });
  const calls: CallRecord[] = [];

  async function admit(request: AdmitRequest): Promise<AdmitResult> {
    const { name, namespace } = requestCoordinates(request);
    const object = request.object === undefined ? undefined : clone(request.object);
    if (request.operation === 'CREATE' && object) wipeForCreate(object);
    if (isExemptResource(request)) return { allowed: true, object, warnings: [], auditAnnotations: {} };
    const ctx: DispatchContext = {
      store: options.api.store,
      agent,
      resolveService: options.resolveService,
      calls,
      request,
      review: { namespace, name, object, oldObject: request.oldObject === undefined ? undefined : clone(request.oldObject) },
      parentDeadline: performance.now() + (request.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
      warnings: new WarningCollector(),
      audit: new AuditAnnotations(),
    };
    try {
      await runMutating(ctx);
      if (request.operation === 'CREATE' && ctx.review.object) {
        fillCreateSystemFields(ctx.review.object, kubeTime(), randomUUID(), randomBytes(3).toString('hex').slice(0, 5));
      }
      await runValidating(ctx);
      return { allowed: true, object: ctx.review.object, warnings: ctx.warnings.result(), auditAnnotations: ctx.audit.values };
    } catch (error) {
      if (!(error instanceof FinalStatus)) throw error;
      return { allowed: false, status: error.status, warnings: ctx.warnings.result(), auditAnnotations: ctx.audit.values };
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
