/**
 * Who is calling: bearer tokens mapped to users, as kube-apiserver's token authenticators do.
 * The double's own token is the administrator's (system:masters); service-account tokens are
 * issued for the local kubelet's Pods and name `system:serviceaccount:<namespace>:<name>`.
 */
import { randomBytes } from 'node:crypto';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export const ADMIN_USER: UserInfo = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };

export function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

export const isMaster = (user: UserInfo): boolean => (user.groups ?? []).includes('system:masters');

export class TokenAuthenticator {
  readonly #users = new Map<string, UserInfo>();

  constructor(adminToken: string) {
    this.#users.set(adminToken, ADMIN_USER);
  }

  /** The user a request's Authorization header names, or undefined (401). */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    const match = /^Bearer (\S+)$/.exec(authorization ?? '');
    return match ? this.#users.get(match[1] ?? '') : undefined;
  }

  /** A new opaque token for `user` (a projected service-account token in a real cluster). */
  issue(user: UserInfo): string {
    const token = randomBytes(24).toString('hex');
    this.#users.set(token, user);
    return token;
  }

  revoke(token: string): void {
    this.#users.delete(token);
  }
}
