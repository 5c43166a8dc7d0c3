/**
 * kube-apiserver's authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go): a check is
 * built from the request's user (`authorizer`), optionally impersonating a service account,
 * narrowed to a path or a group/resource/subresource/namespace/name (and, from 1.31, field and
 * label selectors), then asked with a verb. The answer comes from whoever the Authorizer was
 * made with; without one (nobody to ask) every check is an error, so the entry's failurePolicy
 * decides, as for any failing expression.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { fail } from './errors.js';

/** What a check asks, in SubjectAccessReview terms. */
export interface AuthorizationQuestion {
  user: { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> };
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

export interface AuthorizationAnswer {
  allowed: boolean;
  reason?: string;
  error?: string;
}

/** Answers a check synchronously (a cache, or answers given on the command line); undefined: nobody to ask. */
export type Authorize = (question: AuthorizationQuestion) => AuthorizationAnswer;

export class Authorizer {
  constructor(
    readonly user: AuthorizationQuestion['user'],
    readonly authorize?: Authorize,
    /** The request's own resource, for `authorizer.requestResource`. */
    readonly request?: Omit<AuthorizationQuestion, 'user' | 'verb'>,
  ) {}
  get requestResource(): AuthorizerCheck {
    return new AuthorizerCheck(this, { ...this.request });
  }
}

export class AuthorizerCheck {
  constructor(
    readonly authorizer: Authorizer,
    readonly attributes: Omit<AuthorizationQuestion, 'user' | 'verb'>,
  ) {}
  with(extra: Partial<AuthorizationQuestion>): AuthorizerCheck {
    return new AuthorizerCheck(this.authorizer, { ...this.attributes, ...extra });
  }
}

export class AuthorizerDecision {
  constructor(readonly answer: AuthorizationAnswer) {}
}

function decide(check: AuthorizerCheck, verb: string): AuthorizerDecision {
  const { authorizer } = check;
  if (!authorizer.authorize) return fail('authorizer checks need an authorizer to ask (kube-apiserver, or answers given to evaluate); none is configured here');
  return new AuthorizerDecision(authorizer.authorize({ user: authorizer.user, verb, ...check.attributes }));
}

export function registerAuthorizer(env: Environment): void {
  env.registerType('AuthorizerCheck', AuthorizerCheck);
  env.registerType('AuthorizerDecision', AuthorizerDecision);
  env.registerType('Authorizer', { ctor: Authorizer, fields: { requestResource: 'AuthorizerCheck' } });
  env.registerFunction('Authorizer.group(string): AuthorizerCheck', (a: Authorizer, group: string) => new AuthorizerCheck(a, { group }));
  env.registerFunction('Authorizer.path(string): AuthorizerCheck', (a: Authorizer, path: string) => new AuthorizerCheck(a, { path }));
  env.registerFunction('Authorizer.serviceAccount(string, string): Authorizer', (a: Authorizer, namespace: string, name: string) => {
    const username = `system:serviceaccount:${namespace}:${name}`;
    return new Authorizer({ username, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] }, a.authorize);
  });
  for (const step of ['resource', 'subresource', 'namespace', 'name'] as const) {
    env.registerFunction(`AuthorizerCheck.${step}(string): AuthorizerCheck`, (check: AuthorizerCheck, value: string) => check.with({ [step]: value }));
  }
  env.registerFunction('AuthorizerCheck.check(string): AuthorizerDecision', decide);
  env.registerFunction('AuthorizerDecision.allowed(): bool', (d: AuthorizerDecision) => d.answer.allowed);
  env.registerFunction('AuthorizerDecision.errored(): bool', (d: AuthorizerDecision) => d.answer.error !== undefined && d.answer.error !== '');
  env.registerFunction('AuthorizerDecision.reason(): string', (d: AuthorizerDecision) => d.answer.reason ?? '');
  env.registerFunction('AuthorizerDecision.error(): string', (d: AuthorizerDecision) => d.answer.error ?? '');
}

/** 1.31: resource checks narrowed by field and label selectors. */
export function registerAuthorizerSelectors(env: Environment): void {
  env.registerFunction('AuthorizerCheck.fieldSelector(string): AuthorizerCheck', (check: AuthorizerCheck, value: string) => check.with({ fieldSelector: value }));
  env.registerFunction('AuthorizerCheck.labelSelector(string): AuthorizerCheck', (check: AuthorizerCheck, value: string) => check.with({ labelSelector: value }));
}
