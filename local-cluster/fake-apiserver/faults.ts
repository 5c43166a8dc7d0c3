/** Fault injection per resource and verb (and optionally name and namespace). */
import type { Verb } from './resources.js';

export interface FaultMatch {
  /** Plural resource name; omitted: every resource. */
  resource?: string;
  /** Omitted: every verb. */
  verb?: Verb;
  name?: string;
  namespace?: string;
  /**
   * Only requests of this user (its username): API Priority and Fairness sheds load per flow, so
   * an overloaded kube-apiserver answers one client's requests 429 while others get through.
   */
  user?: string;
  /**
   * Only dry runs (`true`) or only requests that store (`false`); omitted: both. kube-apiserver
   * may refuse a write whose dry run it accepted a moment before (rights or admission changed).
   */
  dryRun?: boolean;
}

export type Fault =
  | { latencyMs: number }
  | { hang: true }
  | { status: number; retryAfterSeconds?: number }
  | { conflict: true }
  | { reset: true };

export interface FaultOptions {
  /** How many matching requests the fault hits; default: all of them until cleared. */
  times?: number;
}

export interface FaultTarget {
  resource: string;
  verb: Verb;
  name?: string;
  namespace?: string;
  user?: string;
  dryRun?: boolean;
}

interface FaultEntry {
  match: FaultMatch;
  fault: Fault;
  remaining: number;
}

export class FaultRegistry {
  private entries: FaultEntry[] = [];

  add(match: FaultMatch, fault: Fault, options: FaultOptions = {}): void {
    this.entries.push({ match, fault, remaining: options.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.entries = [];
  }

  /** The first fault matching `target`, consuming one of its uses. */
  take(target: FaultTarget): Fault | undefined {
    const entry = this.entries.find(
      (e) =>
        e.remaining > 0 &&
        (e.match.resource === undefined || e.match.resource === target.resource) &&
        (e.match.verb === undefined || e.match.verb === target.verb) &&
        (e.match.name === undefined || e.match.name === target.name) &&
        (e.match.namespace === undefined || e.match.namespace === target.namespace) &&
        (e.match.user === undefined || e.match.user === target.user) &&
        (e.match.dryRun === undefined || e.match.dryRun === (target.dryRun === true)),
    );
    if (!entry) return undefined;
    entry.remaining -= 1;
    return entry.fault;
  }
}
