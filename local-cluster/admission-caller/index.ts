/**
 * The other role of kube-apiserver: for one request, call the registered webhooks as the
 * apiserver would (contract sections 1 to 3) and return what the user would see.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { FakeApiServer } from '../fake-apiserver/index.js';
import { kubeTime } from '../fake-apiserver/objects.js';
import { fillCreateSystemFields } from './dispatch.js';
import { GoTransportAgent } from './go-transport-agent.js';
import { beginAdmission, type PhaseOutcome } from './session.js';
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

export function createAdmissionCaller(options: AdmissionCallerOptions): AdmissionCaller {
  const agent = new GoTransportAgent();
  const calls: CallRecord[] = [];

  async function admit(request: AdmitRequest): Promise<AdmitResult> {
    const session = beginAdmission({ store: options.api.store, agent, resolveService: options.resolveService, calls }, request);
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
    close: async () => {
      agent.destroy();
    },
  };
}

export { createWebhookAdmission, type WebhookAdmission } from './write-admission.js';
