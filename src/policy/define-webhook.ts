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
  RuleWithOperations,
  SideEffects,
  ValidatingHandler,
  ValidatingWebhook,
  WebhookSpec,
  WebhookType,
} from './types.js';
import { readWebhookSpec, WEBHOOK_SPEC_FIELDS } from './webhook-spec-fields.js';
import { ProblemList, YamlField } from './yaml-field.js';

/** What a custom webhook must say; everything else has the same defaults as policy entries. */
export interface WebhookDefinition extends HandlerNeeds {
  /** DNS-1123 label; served on /validate/<name> or /mutate/<name>. */
  name: string;
  /** Which operations on which resources kube-apiserver sends to it. */
  rules: RuleWithOperations[];
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

export interface ValidatingWebhookDefinition extends WebhookDefinition {
  handler: ValidatingHandler;
}

export interface MutatingWebhookDefinition extends WebhookDefinition {
  /** Default Never. */
  reinvocationPolicy?: ReinvocationPolicy;
  handler: MutatingHandler;
}

/** Thrown by defineValidatingWebhook / defineMutatingWebhook; `problems` lists every one. */
export class WebhookDefinitionError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid webhook definition: ${problems.join('; ')}`);
    this.name = 'WebhookDefinitionError';
  }
}

/** Checks a definition with the same rules as a policy file entry (one code path, one behaviour). */
function checkedSpec(definition: WebhookDefinition, type: WebhookType): WebhookSpec {
  const { handler: _handler, readsNamespaceObject: _reads, ...fields } = definition as WebhookDefinition & { handler?: unknown };
  const doc = new Document(fields);
  const problems = new ProblemList('<definition>', new LineCounter());
  const root = new YamlField(problems, doc, doc.contents!, definition.name ? `webhook "${definition.name}"` : 'webhook');
  const entries = root.map(WEBHOOK_SPEC_FIELDS);
  const spec = entries ? readWebhookSpec(entries, root, type, undefined) : undefined;
  if (problems.size > 0 || !spec) throw new WebhookDefinitionError(problems.messages());
  return spec;
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

/** A custom validating webhook, defaulted and checked; throws WebhookDefinitionError listing every problem. */
export function defineValidatingWebhook(definition: ValidatingWebhookDefinition): ValidatingWebhook {
  checkHandler(definition);
  return { ...checkedSpec(definition, 'validating'), type: 'validating', handler: definition.handler, ...needsOf(definition) };
}

/** A custom mutating webhook, defaulted and checked; throws WebhookDefinitionError listing every problem. */
export function defineMutatingWebhook(definition: MutatingWebhookDefinition): MutatingWebhook {
  checkHandler(definition);
  return { ...checkedSpec(definition, 'mutating'), type: 'mutating', handler: definition.handler, ...needsOf(definition) };
}
