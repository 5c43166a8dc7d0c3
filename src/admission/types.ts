import type { HandlerPermission } from './handler-permissions.js';
import type { HandlerLogger, HandlerMetrics } from './handler-services.js';

/**
 * The handler API: what a webhook is, what it receives and what it may answer.
 * These types are the public contract of custom TypeScript handlers (see src/index.ts).
 */

/** What a request does to its object; a PATCH arrives as UPDATE (or CREATE when server-side apply creates). */
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
/** An operation a rule matches; `*` matches all. */
export type RuleOperation = Operation | '*';
/** What kube-apiserver does when the call fails or times out: reject the request, or let it through. */
export type FailurePolicy = 'Fail' | 'Ignore';
/** Whether the handler has side effects outside the review (only without dryRun, or none). */
export type SideEffects = 'None' | 'NoneOnDryRun';
/** Whether a request for an equivalent resource version (apps/v1beta1 for apps/v1) is sent too. */
export type MatchPolicy = 'Exact' | 'Equivalent';
/** Whether a mutating webhook is called again when a later one changed the object. */
export type ReinvocationPolicy = 'Never' | 'IfNeeded';
/** Which configuration a webhook is registered in, and whether it may patch. */
export type WebhookType = 'validating' | 'mutating';
/** enforce: deny; warn: allow with a warning; audit: allow with an audit annotation. */
export type RuleMode = 'enforce' | 'warn' | 'audit';

/** An object's API group, version and kind, as in an AdmissionRequest. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** A resource's API group, version and plural name, as in an AdmissionRequest. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Who made the request, as kube-apiserver authenticated them. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The metadata of a Kubernetes object (the fields handlers use most; any other is allowed). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

/** Any Kubernetes object, as it arrives in a review. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/**
 * AdmissionRequest as kube-apiserver sends it (admission.k8s.io v1 and v1beta1). `T` is the type
 * of `object` and `oldObject`: a typed webhook (`defineValidatingWebhook({ kind: 'Pod', ... })`)
 * gets its kind's type, any other webhook a KubeObject.
 */
export interface AdmissionRequest<T = KubeObject> {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object: T | null;
  oldObject: T | null;
  dryRun: boolean;
  options: unknown;
}

/** What every handler gets besides the request. */
export interface AdmissionContext {
  /** Aborts when the caller's `?timeout=` is about to run out: stop work, the answer is decided. */
  signal: AbortSignal;
  /** Same as request.dryRun: handlers with side effects must not perform them when true. */
  dryRun: boolean;
  /** The webhook being served. */
  webhook: WebhookSpec;
  /**
   * The request's Namespace, shaped as a ValidatingAdmissionPolicy's `namespaceObject` (spec,
   * status and the main metadata fields); null for cluster-scoped requests and requests on a
   * Namespace. The server serves it from its Namespace cache (list + watch, never an API call per
   * review) when some served webhook sets `readsNamespaceObject`; it is absent (undefined) when
   * the cache does not have the namespace yet, or no cache runs. `evaluate`, `test` and `audit`
   * always set it.
   */
  namespaceObject?: KubeObject | null;
  /** The server's logger for this review: every line carries its `uid` and the `webhook` name. Made on first use. */
  log: HandlerLogger;
  /** Custom metrics on the server's Prometheus registry (get-or-create by name). */
  metrics: HandlerMetrics;
}

/** An answer that lets the request through, with optional warnings and audit annotations. */
export interface Allowed {
  allowed: true;
  /** Shown to the API client as `Warning:` headers; keep each <= 120 characters. */
  warnings?: string[];
  /** Recorded in the audit log as `<webhook name>/<key>`; keys are qualified-name parts. */
  auditAnnotations?: Record<string, string>;
}

/** An answer that rejects the request, with the message the user sees. */
export interface Denied {
  allowed: false;
  /** Why, in words the user can act on. */
  message: string;
  /** HTTP code the user sees; default 403, values below 400 are raised to 400 by kube-apiserver. */
  code?: number;
  reason?: string;
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

/** What a validating handler answers. */
export type ValidationDecision = Allowed | Denied;

/**
 * A mutating handler returns the object it wants; the server computes the JSON patch against its
 * own copy of the original, so the handler may edit request.object in place and return it.
 */
export interface Mutated<T = KubeObject> extends Allowed {
  object: T;
}

/**
 * What a mutating handler answers: a decision, or the object it wants. For a typed webhook an
 * allowed answer with an `object` can only be a Mutated one, so the object is type-checked
 * against the webhook's kind (a plain Allowed would otherwise accept any `object`).
 */
export type MutationDecision<T = KubeObject> = string extends keyof T ? ValidationDecision | Mutated<T> : Denied | (Allowed & { object?: never }) | Mutated<T>;

/** A validating webhook's logic: the request in, a decision out (synchronous or not). */
export type ValidatingHandler<T = KubeObject> = (
  request: AdmissionRequest<T>,
  context: AdmissionContext,
) => ValidationDecision | Promise<ValidationDecision>;

/** A mutating webhook's logic: the request in, a decision or the wanted object out. */
export type MutatingHandler<T = KubeObject> = (
  request: AdmissionRequest<T>,
  context: AdmissionContext,
) => MutationDecision<T> | Promise<MutationDecision<T>>;

/** Which operations on which resources kube-apiserver sends to a webhook. */
export interface RuleWithOperations {
  operations: RuleOperation[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** One requirement of a label selector (`key operator values`). */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** A Kubernetes label selector: all of matchLabels and matchExpressions must hold. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** A CEL expression kube-apiserver evaluates before calling the webhook; false skips the call. */
export interface MatchCondition {
  name: string;
  expression: string;
}

/** Everything about a webhook except its handler: what registration publishes. */
export interface WebhookSpec {
  /** DNS-1123 label: the path segment (`/validate/<name>`, `/mutate/<name>`) and the start of the registered name. */
  name: string;
  type: WebhookType;
  rules: RuleWithOperations[];
  failurePolicy: FailurePolicy;
  sideEffects: SideEffects;
  /** 1..30 */
  timeoutSeconds: number;
  matchPolicy: MatchPolicy;
  /** Mutating only. */
  reinvocationPolicy?: ReinvocationPolicy;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
}

/** What a handler needs from the server besides the request; not part of the registration. */
export interface HandlerNeeds {
  /**
   * The handler reads context.namespaceObject: the server then keeps a cache of the cluster's
   * Namespaces (its ServiceAccount needs list and watch on namespaces) and is Ready only once
   * the cache has synced.
   */
  readsNamespaceObject?: boolean;
  /**
   * The RBAC the handler's own API calls need (none by default; no wildcards); `render
   * --handlers` renders it for the server's ServiceAccount.
   */
  permissions?: HandlerPermission[];
}

/** A validating webhook: its spec and its handler. */
export interface ValidatingWebhook extends WebhookSpec, HandlerNeeds {
  type: 'validating';
  handler: ValidatingHandler;
  /**
   * Its handler asks kube-apiserver authorization questions (a cel rule that reads `authorizer`):
   * the server then needs the right to create SubjectAccessReviews. Decided when the policy loads.
   */
  usesAuthorizer?: boolean;
}

/** A mutating webhook: its spec and its handler. */
export interface MutatingWebhook extends WebhookSpec, HandlerNeeds {
  type: 'mutating';
  handler: MutatingHandler;
}

/** Any webhook the server can serve and register. */
export type Webhook = ValidatingWebhook | MutatingWebhook;
