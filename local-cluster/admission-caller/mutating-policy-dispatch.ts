/**
 * The MutatingAdmissionPolicy admission plugin (k8s.io/apiserver policy/mutating dispatcher),
 * which kube-apiserver runs first of the mutating plugins, before the mutating webhooks
 * (AllOrderedPlugins in pkg/kubeapiserver/options/plugins.go). Each invocation (policy, binding,
 * params object: the walk the validating plugin makes too) whose matchConditions hold applies its
 * mutations in order, each on the object as the one before left it: `JSONPatch` (RFC 6902; a
 * failed `test` operation leaves the object as it was, any other failure is an error) or
 * `ApplyConfiguration` (merged as apply-merge.ts says). An error (an expression, a patch that does
 * not apply, params missing under `Deny`) fails the request under failurePolicy Fail with
 * `policy '<policy>' with binding '<binding>' denied request: <error>`, and is passed over under
 * Ignore. Reinvocation: a policy with reinvocationPolicy IfNeeded that was invoked before a later
 * change (by a later policy, or by the mutating webhooks) runs once more after the webhooks, as
 * kube-apiserver's reinvocation round does.
 * Not imitated: a change made in that round reinvoking the webhooks again, the variables'
 * laziness (each mutation sees the variables computed on the object as it is then), defaulting
 * between mutations (the store defaults the final object), cost budgets, DELETE (never matched:
 * validation refuses it).
 */
import { isDeepStrictEqual } from 'node:util';
import jsonPatch from 'fast-json-patch';
import type { KubeObject, StatusBody } from '../fake-apiserver/index.js';
import { clone, isRecord } from '../fake-apiserver/objects.js';
import { evaluateMutation } from '../fake-apiserver/policy-cel.js';
import { internalError, policyDenial } from '../fake-apiserver/status.js';
import { decodeTyped, hasTypedSchema, TypedDecodeError } from '../util/typed-decode.js';
import { ApplyMergeError, mergeApplyConfiguration } from './apply-merge.js';
import { requestVariable } from './match-conditions.js';
import { FinalStatus } from './outcomes.js';
import { nameOf, spec, visitInvocations, type PolicyContext, type PolicyInvocation } from './policy-dispatch.js';
import { Activation, matchConditions } from './policy-evaluate.js';

type Json = Record<string, unknown>;

const RESOURCES = { policies: 'mutatingadmissionpolicies', bindings: 'mutatingadmissionpolicybindings' } as const;
const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

const invocationKey = (invocation: PolicyInvocation): string =>
  `${nameOf(invocation.policy)}/${nameOf(invocation.binding)}/${invocation.param?.metadata?.namespace ?? ''}/${invocation.param?.metadata?.name ?? ''}`;

class MutationError extends Error {}

function applyJsonPatch(object: KubeObject, operations: unknown): KubeObject {
  if (!Array.isArray(operations)) throw new MutationError('type mismatch: JSONPatchType.expression should evaluate to array');
  try {
    return jsonPatch.applyPatch(clone(object), operations as jsonPatch.Operation[], true, false).newDocument;
  } catch (error) {
    // A failed test operation: the patch is not applied, and that is no error.
    if ((error as { name?: string }).name === 'TEST_OPERATION_FAILED') return object;
    throw new MutationError(`JSONPath: ${(error as Error).message.split('\n')[0] ?? 'patch failed'}`);
  }
}

/** The request's mutating policies, with what a reinvocation round needs to know. */
export class MutatingPolicies {
  readonly #ctx: PolicyContext;
  /** IfNeeded invocations made so far, in order. */
  readonly #invokedReinvocable: string[] = [];
  /** Those invoked before the latest change: the reinvocation round runs them. */
  #reinvoke = new Set<string>();

  constructor(ctx: PolicyContext) {
    this.#ctx = ctx;
  }

  /** The first round: every matching invocation. */
  async run(): Promise<void> {
    await this.#round(undefined);
  }

  /** The mutating webhooks changed the object: every IfNeeded invocation made so far is due again. */
  changedByOthers(): void {
    this.#reinvoke = new Set(this.#invokedReinvocable);
  }

  /** The reinvocation round, when one is due (a no-op otherwise). */
  async reinvoke(): Promise<void> {
    if (this.#reinvoke.size === 0) return;
    const due = this.#reinvoke;
    this.#reinvoke = new Set();
    await this.#round(due);
  }

  async #round(only: ReadonlySet<string> | undefined): Promise<void> {
    const ctx = this.#ctx;
    let failure: StatusBody | undefined;
    const fail = (invocation: Pick<PolicyInvocation, 'policy' | 'binding'>, message: string): void => {
      if (failure !== undefined || spec(invocation.policy).failurePolicy === 'Ignore') return;
      const denied = `policy '${nameOf(invocation.policy)}' with binding '${nameOf(invocation.binding)}' denied request: ${message}`;
      failure = policyDenial({ group: ctx.request.resource.group, resource: ctx.request.resource.resource }, ctx.target.name || (ctx.target.object?.metadata?.name ?? ''), denied, 'Invalid', 422);
    };
    const status = await visitInvocations(ctx, RESOURCES, {
      invoke: async (invocation) => {
        if (failure !== undefined) return;
        const key = invocationKey(invocation);
        if (only !== undefined && !only.has(key)) return;
        const before = ctx.target.object;
        const outcome = await this.#invoke(invocation);
        if (outcome !== undefined) fail(invocation, outcome);
        if (!isDeepStrictEqual(before, ctx.target.object)) this.#reinvoke = new Set(this.#invokedReinvocable);
        if (only === undefined && spec(invocation.policy).reinvocationPolicy === 'IfNeeded') this.#invokedReinvocable.push(key);
      },
      paramsError: (policy, binding, error) => fail({ policy, binding }, `failed to configure binding: ${error}`),
    });
    if (status) throw new FinalStatus(status);
    if (failure) throw new FinalStatus(failure);
  }

  /** One invocation's mutations, in order; the error's text, or undefined. ctx.target.object is updated after each. */
  async #invoke(invocation: PolicyInvocation): Promise<string | undefined> {
    const ctx = this.#ctx;
    const policySpec = spec(invocation.policy);
    const activation = (): Activation =>
      new Activation(
        {
          object: ctx.target.object,
          oldObject: ctx.target.oldObject,
          request: requestVariable(ctx.request, ctx.target.namespace, ctx.target.name),
          params: invocation.param,
          namespaceObject: invocation.namespaceObject,
        },
        records(policySpec.variables),
      );
    const matched = matchConditions(activation(), records(policySpec.matchConditions));
    if (matched === false) return undefined;
    if (Array.isArray(matched)) return matched.length === 1 ? matched[0] : `[${matched.join(', ')}]`;
    for (const mutation of records(policySpec.mutations)) {
      const object = ctx.target.object;
      if (object === undefined) continue;
      const json = text(mutation.patchType) === 'JSONPatch';
      const member = json ? mutation.jsonPatch : mutation.applyConfiguration;
      const expression = isRecord(member) ? text(member.expression) : '';
      const outcome = activation().evaluateWith(expression, evaluateMutation);
      if ('error' in outcome) return outcome.error;
      try {
        const patched = json ? applyJsonPatch(object, outcome.value) : (mergeApplyConfiguration(object, outcome.value) as KubeObject);
        ctx.target.object = patched === object ? object : await this.#decode(patched);
      } catch (error) {
        if (error instanceof MutationError || error instanceof ApplyMergeError) return error.message;
        throw error;
      }
    }
    return undefined;
  }

  /** The patched object decoded into its kind's typed schema, as after a webhook's patch. */
  async #decode(object: KubeObject): Promise<KubeObject> {
    const { version, kind } = this.#ctx.request.kind;
    if (!(await hasTypedSchema(version, kind))) return object;
    try {
      return await decodeTyped(object, version, kind);
    } catch (error) {
      if (error instanceof TypedDecodeError) throw new FinalStatus(internalError(error.message));
      throw error;
    }
  }
}
