/**
 * The other role of kube-apiserver: for one request, call the registered webhooks as the
 * apiserver would (contract sections 1 to 3) and return what the user would see.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Agent } from 'node:https';
import { storeSource, type AdmissionSource, type FakeApiServer, type KubeApiServer } from '../fake-apiserver/index.js';
import { kubeTime } from '../fake-apiserver/objects.js';
import { fillCreateSystemFields } from './dispatch.js';
import { ConnectionPools } from './connection-pools.js';
import { beginAdmission, type PhaseOutcome } from './session.js';
import type { AdmitRequest, AdmitResult, CallRecord, ServiceResolver } from './types.js';
import { ControlPlaneDownError } from './outcomes.js';

export type * from './types.js';

export { ControlPlaneDownError } from './outcomes.js';

export interface AdmissionCallerOptions {
  /** The double; with its kube-apiservers, each request is served by one of them (their caches, their pools). */
  api: Pick<FakeApiServer, 'store'> & Partial<Pick<FakeApiServer, 'apiservers'>>;
  resolveService: ServiceResolver;
  /**
   * Makes one connection pool (a Service's translating agent, which picks an endpoint per new
   * connection as kube-proxy does); default kube-apiserver's own, GoTransportAgent.
   */
  newAgent?: () => Agent;
}

export interface AdmissionCaller {
  admit(request: AdmitRequest): Promise<AdmitResult>;
  /** Every webhook call so far, with performance.now() timestamps. */
  readonly calls: readonly CallRecord[];
  /** The connection pools, per kube-apiserver and webhook client configuration. */
  readonly pools: ConnectionPools;
  /** Destroys the kept-alive connections. */
  close(): Promise<void>;
}

/** The kube-apiserver that serves `request`: the one it names, else the next one up (round robin). */
function chooser(apiservers: readonly KubeApiServer[] | undefined, store: Pick<FakeApiServer, 'store'>['store']): (request: AdmitRequest) => AdmissionSource {
  if (!apiservers || apiservers.length === 0) {
    const direct = storeSource(store);
    return () => direct;
  }
  let next = 0;
  return (request) => {
    if (request.apiserver !== undefined) {
      const named = apiservers[request.apiserver];
      if (!named) throw new Error(`no kube-apiserver ${request.apiserver}: the control plane has ${apiservers.length}`);
      if (!named.up) throw new ControlPlaneDownError(`${named.name} is down`);
      return named;
    }
    for (let tried = 0; tried < apiservers.length; tried++) {
      const candidate = apiservers[next]!;
      next = (next + 1) % apiservers.length;
      if (candidate.up) return candidate;
    }
    throw new ControlPlaneDownError('no kube-apiserver is up');
  };
}

export function createAdmissionCaller(options: AdmissionCallerOptions): AdmissionCaller {
  const pools = new ConnectionPools(options.newAgent);
  const calls: CallRecord[] = [];
  const choose = chooser(options.api.apiservers, options.api.store);

  async function admit(request: AdmitRequest): Promise<AdmitResult> {
    const session = beginAdmission({ source: choose(request), pools, resolveService: options.resolveService, calls }, request);
    const done = (outcome: PhaseOutcome): AdmitResult =>
      outcome.allowed
        ? { allowed: true, object: outcome.object, warnings: session.warnings(), auditAnnotations: session.auditAnnotations() }
        : { allowed: false, status: outcome.status, warnings: session.warnings(), auditAnnotations: session.auditAnnotations() };
    const mutated = await session.mutate();
    if (!mutated.allowed) return done(mutated);
    const object = mutated.object;
    if (request.operation === 'CREATE' && object) {
      fillCreateSystemFields(object, kubeTime(), randomUUID(), randomBytes(3).toString('hex').slice(0, 5));
    }
    return done(await session.validate(object));
  }

  return {
    admit,
    get calls() {
      return calls.map((c) => ({ ...c }));
    },
    pools,
    close: async () => {
      pools.destroy();
    },
  };
}

export { createWebhookAdmission, type AuditRecord, type WebhookAdmission } from './write-admission.js';
