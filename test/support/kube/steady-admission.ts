/**
 * A steady trickle of admissions through one or more callers (kube-apiservers), from start until
 * stop(): every webhook call they make meanwhile must succeed for a test of an operation that
 * promises no failed call.
 */
import type { AdmissionCaller, AdmitRequest, CallRecord } from '../../../local-cluster/admission-caller/index.js';
import type { Cleanups } from './cluster-harness.js';

export interface SteadyResult {
  /** Admissions made, per caller. */
  admissions: number;
  /** Webhook calls that failed (TLS, refused, timeout, bad answer), with the caller's index. */
  failed: (CallRecord & { caller: number })[];
}

export interface SteadyAdmission {
  stop(): Promise<SteadyResult>;
}

/** Stops by itself at `t`'s teardown too, so a test that fails half-way does not keep it running. */
export function steadyAdmission(t: Cleanups, callers: readonly AdmissionCaller[], request: AdmitRequest, pauseMs = 50): SteadyAdmission {
  const startedAt = performance.now();
  let running = true;
  let admissions = 0;
  const loop = (async () => {
    while (running) {
      await Promise.all(callers.map((caller) => caller.admit(request)));
      admissions++;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  t.teardown(async () => {
    running = false;
    await loop.catch(() => undefined);
  });
  return {
    async stop() {
      running = false;
      await loop;
      const failed = callers.flatMap((caller, index) => caller.calls.filter((c) => c.startedAt >= startedAt && c.outcome === 'error').map((c) => ({ ...c, caller: index })));
      return { admissions, failed };
    },
  };
}
