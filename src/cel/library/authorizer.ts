/**
 * kube-apiserver's authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go), with its
 * types: `authorizer` (an Authorizer for the request's user) gives a PathCheck (`path()`) or a
 * GroupCheck (`group()`), a GroupCheck a ResourceCheck (`resource()`), narrowed by
 * `subresource`, `namespace`, `name` and, from 1.31, `fieldSelector` and `labelSelector`; a
 * check asked with a verb gives a Decision. `authorizer.serviceAccount(ns, name)` asks for that
 * service account instead; `authorizer.requestResource` is the request's own resource.
 *
 * Who answers is the Authorize the Authorizer was made with (../authorization-answers.ts): an
 * error the authorizer itself reports is the decision's (`errored()`, `error()`), as in
 * kube-apiserver; a check nobody could answer (no one to ask, the question could not be sent)
 * throws, failing the expression, so the failurePolicy decides. A check costs what
 * kube-apiserver charges for it (cost.go): 350,000 units, two per expression at most.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { isDns1123Label, isDns1123Subdomain } from '../../admission/kube-names.js';
import { chargeFixedCost } from '../budget.js';
import { fail } from './errors.js';

/** The user a check is about, as a SubjectAccessReview names it. */
export interface AuthorizationUser {
  username: string;
  uid?: string;
  groups: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** What a check asks, in SubjectAccessReview terms: a resource check, or a path check (`path` set). */
export interface AuthorizationQuestion {
  user: AuthorizationUser;
  verb: string;
  path?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  fieldSelector?: string;
  labelSelector?: string;
}

/** kube-apiserver's authorizer.Decision: allow, deny or no opinion (`allowed` false and `denied` unset). */
export interface AuthorizationAnswer {
  allowed: boolean;
  denied?: boolean;
  reason?: string;
  /** The authorizer reported an error with its decision (a SubjectAccessReview's evaluationError): `errored()` is true. */
  error?: string;
}

/** kube-apiserver's fixed cost of one check (cost.go: "allow for only two authorization checks per expression"). */
export const CHECK_COST = 350_000;

/** Answers a check synchronously; throws (failing the expression) when nobody could answer it. */
export type Authorize = (question: AuthorizationQuestion) => AuthorizationAnswer;

type CheckAttributes = Omit<AuthorizationQuestion, 'user' | 'verb'>;

/** The request's own resource, for `authorizer.requestResource`. */
export type RequestResource = Pick<AuthorizationQuestion, 'group' | 'resource' | 'subresource' | 'namespace' | 'name'>;

export class Authorizer {
  constructor(
    readonly user: AuthorizationUser,
    readonly authorize: Authorize,
    readonly request: RequestResource = {},
  ) {}
  get requestResource(): ResourceCheck {
    return new ResourceCheck(this, { ...this.request });
  }
}

export class PathCheck {
  constructor(
    readonly authorizer: Authorizer,
    readonly path: string,
  ) {}
}

export class GroupCheck {
  constructor(
    readonly authorizer: Authorizer,
    readonly group: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly authorizer: Authorizer,
    readonly attributes: CheckAttributes,
  ) {}
  with(extra: CheckAttributes): ResourceCheck {
    return new ResourceCheck(this.authorizer, { ...this.attributes, ...extra });
  }
}

export class Decision {
  constructor(readonly answer: AuthorizationAnswer) {}
}

const TYPES = {
  authorizer: 'kubernetes.authorization.Authorizer',
  path: 'kubernetes.authorization.PathCheck',
  group: 'kubernetes.authorization.GroupCheck',
  resource: 'kubernetes.authorization.ResourceCheck',
  decision: 'kubernetes.authorization.Decision',
} as const;

/** The Authorizer the rest of the policy floor names (environment.ts declares `authorizer` with it). */
export const AUTHORIZER_TYPE = TYPES.authorizer;

function nonEmpty(value: string, what: string): string {
  if (value.trim() === '') fail(`${what} must not be empty`);
  return value;
}

/** serviceaccount.ServiceAccountInfo.UserInfo(): the name kube-apiserver authenticates a service account as. */
function serviceAccount(authorizer: Authorizer, namespace: string, name: string): Authorizer {
  if (!isDns1123Subdomain(name)) fail('Invalid service account name');
  if (!isDns1123Label(namespace)) fail('Invalid service account namespace');
  const user = { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
  return new Authorizer(user, authorizer.authorize);
}

function ask(authorizer: Authorizer, verb: string, attributes: CheckAttributes): Decision {
  chargeFixedCost(CHECK_COST);
  const question: AuthorizationQuestion = { user: authorizer.user, verb };
  // Unset attributes stay absent: "" is what kube-apiserver's AttributesRecord holds for them.
  for (const [key, value] of Object.entries(attributes) as [keyof CheckAttributes, string | undefined][]) if (value) question[key] = value;
  return new Decision(authorizer.authorize(question));
}

export function registerAuthorizer(env: Environment): void {
  env.registerType(TYPES.path, PathCheck);
  env.registerType(TYPES.group, GroupCheck);
  env.registerType(TYPES.resource, ResourceCheck);
  env.registerType(TYPES.decision, Decision);
  env.registerType(TYPES.authorizer, { ctor: Authorizer, fields: { requestResource: TYPES.resource } });
  env.registerFunction(`${TYPES.authorizer}.path(string): ${TYPES.path}`, (a: Authorizer, path: string) => new PathCheck(a, nonEmpty(path, 'path')));
  env.registerFunction(`${TYPES.authorizer}.group(string): ${TYPES.group}`, (a: Authorizer, group: string) => new GroupCheck(a, group));
  env.registerFunction(`${TYPES.authorizer}.serviceAccount(string, string): ${TYPES.authorizer}`, serviceAccount);
  env.registerFunction(`${TYPES.group}.resource(string): ${TYPES.resource}`, (g: GroupCheck, resource: string) => new ResourceCheck(g.authorizer, { group: g.group, resource: nonEmpty(resource, 'resource') }));
  for (const step of ['subresource', 'namespace', 'name'] as const) {
    env.registerFunction(`${TYPES.resource}.${step}(string): ${TYPES.resource}`, (check: ResourceCheck, value: string) => check.with({ [step]: value }));
  }
  env.registerFunction(`${TYPES.path}.check(string): ${TYPES.decision}`, (check: PathCheck, verb: string) => ask(check.authorizer, verb, { path: check.path }));
  env.registerFunction(`${TYPES.resource}.check(string): ${TYPES.decision}`, (check: ResourceCheck, verb: string) => ask(check.authorizer, verb, check.attributes));
  env.registerFunction(`${TYPES.decision}.allowed(): bool`, (d: Decision) => d.answer.allowed);
  env.registerFunction(`${TYPES.decision}.errored(): bool`, (d: Decision) => !!d.answer.error);
  env.registerFunction(`${TYPES.decision}.reason(): string`, (d: Decision) => d.answer.reason ?? '');
  env.registerFunction(`${TYPES.decision}.error(): string`, (d: Decision) => d.answer.error ?? '');
}

/** 1.31: resource checks narrowed by field and label selectors. */
export function registerAuthorizerSelectors(env: Environment): void {
  env.registerFunction(`${TYPES.resource}.fieldSelector(string): ${TYPES.resource}`, (check: ResourceCheck, value: string) => check.with({ fieldSelector: value }));
  env.registerFunction(`${TYPES.resource}.labelSelector(string): ${TYPES.resource}`, (check: ResourceCheck, value: string) => check.with({ labelSelector: value }));
}
