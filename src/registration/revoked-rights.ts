import { isForbidden } from '../kube/api-errors.js';

/** How long a 403 in a reconcile pass is taken for an uninstall in progress before it is an error. */
export const REVOKED_RIGHTS_GRACE_MS = 60_000;

/**
 * A 403 to a leader that has written before means its rights were removed. An uninstall does that:
 * the RBAC goes beside the Deployment, in whatever order the tool deletes, and the Pods get their
 * SIGTERM a moment later. So for the first `graceMs` a 403 is a warning; a 403 that lasts longer is
 * an error (the RBAC was narrowed by hand). Any other failure is an error at once.
 */
export class RevokedRights {
  #since: number | undefined;

  constructor(
    private readonly graceMs = REVOKED_RIGHTS_GRACE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The level to log `error` at (`cause` looked into: the registration wraps the API's error). */
  levelFor(error: unknown): 'warn' | 'error' {
    const apiError = error instanceof Error && error.cause !== undefined ? error.cause : error;
    if (!isForbidden(apiError)) return 'error';
    this.#since ??= this.now();
    return this.now() - this.#since < this.graceMs ? 'warn' : 'error';
  }

  /** A pass went through: the rights are there. */
  succeeded(): void {
    this.#since = undefined;
  }
}
