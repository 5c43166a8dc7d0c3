/**
 * One request's pass through admission, in the two steps kube-apiserver separates: the mutating
 * phase on the decoded object (MutatingAdmissionPolicies, then the mutating webhooks), then (after the store filled in system fields and validated) the
 * validating phase on the object about to be stored (ValidatingAdmissionPolicies, then the
 * validating webhooks). `admit` runs both back to back; the
 * double's REST handlers run the store's own steps in between.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AdmissionSource, KubeObject } from '../fake-apiserver/index.js';
import { clone } from '../fake-apiserver/objects.js';
import type { StatusBody } from '../fake-apiserver/status.js';
import { AuditAnnotations, WarningCollector } from './annotations.js';
import type { ConnectionPools } from './connection-pools.js';
import { runMutating, runValidating, type DispatchContext } from './dispatch.js';
import { ControlPlaneDownError, FinalStatus } from './outcomes.js';
import { MutatingPolicies } from './mutating-policy-dispatch.js';
import { runValidatingPolicies } from './policy-dispatch.js';
import { isExemptResource } from './select.js';
import type { AdmitRequest, CallRecord, ServiceResolver } from './types.js';

/** The create/update/patch/delete handlers bound the user's request to 34 s. */
const DEFAULT_REQUEST_TIMEOUT_MS = 34_000;
const CREATE_WIPED_FIELDS = ['uid', 'resourceVersion', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds'];

export interface SessionDeps {
  source: AdmissionSource;
  pools: ConnectionPools;
  resolveService: ServiceResolver;
  calls: CallRecord[];
}

export type PhaseOutcome = { allowed: true; object: KubeObject | undefined } | { allowed: false; status: StatusBody };

export interface AdmissionSession {
  mutate(): Promise<PhaseOutcome>;
  /** The validating phase on `object` (for a CREATE: with uid, creationTimestamp and generated name). */
  validate(object: KubeObject | undefined): Promise<PhaseOutcome>;
  warnings(): string[];
  auditAnnotations(): Record<string, string>;
}

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

/**
 * A kube-apiserver that goes down (or restarts) while it serves a request loses the request with
 * its process: the client's connection is cut and nothing is admitted or stored. Its caches are
 * gone too, so going on would read no configuration at all and admit what every webhook denies.
 */
function ensureStillServing(ctx: DispatchContext, incarnation: number): void {
  if (!ctx.source.up || ctx.source.incarnation !== incarnation) {
    throw new ControlPlaneDownError(`${ctx.source.name} went down while it served the request: the client's connection was cut`);
  }
}

async function phase(run: () => Promise<void>, ctx: DispatchContext, incarnation: number): Promise<PhaseOutcome> {
  ensureStillServing(ctx, incarnation);
  let outcome: PhaseOutcome;
  try {
    await run();
    outcome = { allowed: true, object: ctx.review.object };
  } catch (error) {
    if (!(error instanceof FinalStatus)) throw error;
    outcome = { allowed: false, status: error.status };
  }
  ensureStillServing(ctx, incarnation);
  return outcome;
}

/**
 * kube-apiserver's order of the mutating plugins: MutatingAdmissionPolicy, then the mutating
 * webhooks (with their own reinvocation round), then the policies' reinvocation round when a
 * later change is due to them (mutating-policy-dispatch.ts).
 */
async function mutatingPlugins(ctx: DispatchContext): Promise<void> {
  const policies = new MutatingPolicies({ ...ctx, target: ctx.review });
  await policies.run();
  const before = ctx.review.object;
  await runMutating(ctx);
  if (!isDeepStrictEqual(before, ctx.review.object)) policies.changedByOthers();
  await policies.reinvoke();
}

/** kube-apiserver's order: the ValidatingAdmissionPolicy plugin, then the validating webhooks. */
async function validatingPlugins(ctx: DispatchContext): Promise<void> {
  const denied = await runValidatingPolicies({ ...ctx, target: ctx.review });
  if (denied) throw new FinalStatus(denied);
  await runValidating(ctx);
}

export function beginAdmission(deps: SessionDeps, request: AdmitRequest): AdmissionSession {
  const { name, namespace } = requestCoordinates(request);
  const object = request.object === undefined ? undefined : clone(request.object);
  if (request.operation === 'CREATE' && object) wipeForCreate(object);
  const exempt = isExemptResource(request);
  const incarnation = deps.source.incarnation;
  const ctx: DispatchContext = {
    ...deps,
    request,
    review: { namespace, name, object, oldObject: request.oldObject === undefined ? undefined : clone(request.oldObject) },
    parentDeadline: performance.now() + (request.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    warnings: new WarningCollector(),
    audit: new AuditAnnotations(),
  };
  return {
    mutate: () => (exempt ? Promise.resolve({ allowed: true, object: ctx.review.object }) : phase(() => mutatingPlugins(ctx), ctx, incarnation)),
    validate: (finalObject) => {
      ctx.review.object = finalObject === undefined ? undefined : clone(finalObject);
      // The validating phase of a generateName create carries the generated name
      // (rest.AdmissionToValidateObjectFunc takes it from the object when the request had none).
      if (ctx.review.name === '' && finalObject?.metadata?.name) ctx.review.name = finalObject.metadata.name;
      return exempt ? Promise.resolve({ allowed: true, object: ctx.review.object }) : phase(() => validatingPlugins(ctx), ctx, incarnation);
    },
    warnings: () => ctx.warnings.result(),
    auditAnnotations: () => ctx.audit.values,
  };
}
