import { Document, LineCounter } from 'yaml';
import type {
  FailurePolicy,
  HandlerNeeds,
  LabelSelector,
  MatchCondition,
  MatchPolicy,
  MutatingHandler,
  MutatingWebhook,
  ReinvocationPolicy,
  RuleOperation,
  RuleWithOperations,
  SideEffects,
  ValidatingHandler,
  ValidatingWebhook,
  WebhookSpec,
  WebhookType,
} from '../admission/types.js';
import { permissionProblems, type HandlerPermission } from '../admission/handler-permissions.js';
import type { KindRef, ObjectOf } from '../admission/kinds/kind-objects.js';
import { checkOperations, checkRulesForKinds, DEFAULT_KIND_OPERATIONS, resolveKinds, rulesForKinds } from '../admission/kinds/kind-rules.js';
import { readWebhookSpec, WEBHOOK_SPEC_FIELDS } from './webhook-spec-fields.js';
import { ProblemList, YamlField } from '../util/yaml-field.js';

/** The fields of the entry table every webhook definition may set, besides its rules and handler. */
export interface WebhookFields extends HandlerNeeds {
  /** DNS-1123 label; served on /validate/<name> or /mutate/<name>. */
  name: string;
  /** Default Fail for validating, Ignore for mutating webhooks. */
  failurePolicy?: FailurePolicy;
  /** Default None. */
  sideEffects?: SideEffects;
  /** 1..30, default 5. */
  timeoutSeconds?: number;
  /** Default Equivalent. */
  matchPolicy?: MatchPolicy;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
}

/** What a custom webhook must say; everything else has the same defaults as policy entries. */
export interface WebhookDefinition extends WebhookFields {
  /** Which operations on which resources kube-apiserver sends to it. */
  rules: RuleWithOperations[];
}

/** An untyped validating webhook: `request.object` is a KubeObject. */
export interface ValidatingWebhookDefinition extends WebhookDefinition {
  handler: ValidatingHandler;
}

/** An untyped mutating webhook: `request.object` is a KubeObject. */
export interface MutatingWebhookDefinition extends WebhookDefinition {
  /** Default Never. */
  reinvocationPolicy?: ReinvocationPolicy;
  handler: MutatingHandler;
}

/**
 * A webhook for objects of known kinds: `request.object` and `request.oldObject` get the kind's
 * type, and the rules follow from the kinds unless given.
 */
export interface KindWebhookDefinition<K extends KindRef> extends WebhookFields {
  /** The kind (`'Pod'`), kinds (`['Deployment', 'StatefulSet']`) or a kind of your own (defineKind). */
  kind: K | readonly K[];
  /**
   * Default: `operations` on each kind's resource, plus UPDATE on `pods/ephemeralcontainers` for
   * Pods when the operations include UPDATE. Given rules may only name the kinds' resources and the subresources carrying them.
   */
  rules?: RuleWithOperations[];
  /**
   * The operations of the derived rules; default CREATE and UPDATE for a validating webhook,
   * CREATE for a mutating one. Ignored when `rules` are given.
   */
  operations?: RuleOperation[];
}

/** A typed validating webhook: `request.object` is an `ObjectOf<K>`. */
export interface ValidatingKindWebhookDefinition<K extends KindRef> extends KindWebhookDefinition<K> {
  handler: ValidatingHandler<ObjectOf<K>>;
}

/** A typed mutating webhook: `request.object` is an `ObjectOf<K>`, and so is the object it returns. */
export interface MutatingKindWebhookDefinition<K extends KindRef> extends KindWebhookDefinition<K> {
  /** Default Never. */
  reinvocationPolicy?: ReinvocationPolicy;
  handler: MutatingHandler<ObjectOf<K>>;
}

type AnyDefinition = (WebhookDefinition | KindWebhookDefinition<KindRef>) & { handler?: unknown };

/** Thrown by defineValidatingWebhook / defineMutatingWebhook; `problems` lists every one. */
export class WebhookDefinitionError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid webhook definition: ${problems.join('; ')}`);
    this.name = 'WebhookDefinitionError';
  }
}

/** The rules a typed definition's kinds give, or the problems with its kind, operations and rules. */
function kindRules(definition: KindWebhookDefinition<KindRef>, type: WebhookType, problems: string[]): RuleWithOperations[] | undefined {
  const kinds = resolveKinds(Array.isArray(definition.kind) ? definition.kind : [definition.kind], problems);
  const operations = definition.operations ?? undefined;
  if (operations !== undefined && !(Array.isArray(operations) && checkOperations(operations, problems))) {
    if (!Array.isArray(operations)) problems.push('operations must be a list such as ["CREATE", "UPDATE"]');
    return undefined;
  }
  if (Array.isArray(definition.rules)) checkRulesForKinds(definition.rules, kinds, problems);
  return kinds.length > 0 ? rulesForKinds(kinds, operations ?? DEFAULT_KIND_OPERATIONS[type]) : undefined;
}

/** Checks a definition with the same rules as a policy file entry (one code path, one behaviour). */
function checkedSpec(definition: AnyDefinition, type: WebhookType): WebhookSpec {
  const { handler: _handler, permissions: _permissions, readsNamespaceObject: _reads, ...rest } = definition;
  const label = definition.name ? `webhook "${definition.name}"` : 'webhook';
  let defaultRules: RuleWithOperations[] | undefined;
  const kindProblems: string[] = [];
  let fields: Record<string, unknown> = rest;
  if ('kind' in rest && rest.kind !== undefined) {
    const { kind: _kind, operations: _operations, ...specFields } = rest as KindWebhookDefinition<KindRef>;
    fields = specFields;
    defaultRules = kindRules(definition as KindWebhookDefinition<KindRef>, type, kindProblems);
  }
  const doc = new Document(fields);
  const problems = new ProblemList('<definition>', new LineCounter());
  const root = new YamlField(problems, doc, doc.contents!, label);
  const entries = root.map(WEBHOOK_SPEC_FIELDS);
  const spec = entries ? readWebhookSpec(entries, root, type, defaultRules ?? (kindProblems.length > 0 ? [] : undefined)) : undefined;
  const all = [...problems.messages(), ...[...kindProblems, ...permissionProblems(definition.permissions)].map((p) => `${label}: ${p}`)];
  if (all.length > 0 || !spec) throw new WebhookDefinitionError(all);
  return spec;
}

function permissionsOf(definition: WebhookFields): { permissions?: HandlerPermission[] } {
  return definition.permissions && definition.permissions.length > 0 ? { permissions: structuredClone(definition.permissions) } : {};
}

function needsOf(definition: HandlerNeeds): HandlerNeeds {
  if (definition.readsNamespaceObject !== undefined && typeof definition.readsNamespaceObject !== 'boolean') {
    throw new WebhookDefinitionError([`readsNamespaceObject must be true or false`]);
  }
  return definition.readsNamespaceObject ? { readsNamespaceObject: true } : {};
}

function checkHandler(definition: { name: string; handler: unknown }): void {
  if (typeof definition.handler !== 'function') throw new WebhookDefinitionError([`webhook "${definition.name}": handler must be a function`]);
}

/**
 * A custom validating webhook, defaulted and checked; throws WebhookDefinitionError listing every
 * problem. With `kind`, `request.object` has the kind's type and the rules follow from the kind:
 * `defineValidatingWebhook({ name, kind: 'Pod', handler })`.
 */
export function defineValidatingWebhook<const K extends KindRef>(definition: ValidatingKindWebhookDefinition<K>): ValidatingWebhook;
export function defineValidatingWebhook(definition: ValidatingWebhookDefinition): ValidatingWebhook;
export function defineValidatingWebhook(definition: ValidatingWebhookDefinition | ValidatingKindWebhookDefinition<KindRef>): ValidatingWebhook {
  checkHandler(definition);
  // The rules (derived from the kind, or checked against it) are what makes the typed handler's view true.
  return { ...checkedSpec(definition, 'validating'), ...permissionsOf(definition), type: 'validating', handler: definition.handler as ValidatingHandler, ...needsOf(definition) };
}

/**
 * A custom mutating webhook, defaulted and checked; throws WebhookDefinitionError listing every
 * problem. With `kind`, `request.object` has the kind's type and the rules follow from the kind.
 */
export function defineMutatingWebhook<const K extends KindRef>(definition: MutatingKindWebhookDefinition<K>): MutatingWebhook;
export function defineMutatingWebhook(definition: MutatingWebhookDefinition): MutatingWebhook;
export function defineMutatingWebhook(definition: MutatingWebhookDefinition | MutatingKindWebhookDefinition<KindRef>): MutatingWebhook {
  checkHandler(definition);
  return { ...checkedSpec(definition, 'mutating'), ...permissionsOf(definition), type: 'mutating', handler: definition.handler as MutatingHandler, ...needsOf(definition) };
}
