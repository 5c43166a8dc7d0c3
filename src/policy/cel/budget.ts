/**
 * What bounds one CEL evaluation. CEL has no loops besides the comprehension macros (all,
 * exists, exists_one, map, filter), so a rule's running time is its comprehension steps times
 * a body bounded by the expression's size. Every step is counted, and every 64th reads the
 * process's CPU time; past either limit the step throws and the evaluation is an error (the
 * entry's failurePolicy decides). CPU time, not the wall clock: a pod throttled by its CPU limit,
 * or a busy node, must not turn a legitimate rule into an error. Kubernetes bounds the same
 * thing with its CEL cost units.
 */

export interface CelLimits {
  /** Comprehension steps per review, over every expression of the rule. */
  maxIterations: number;
  /** CPU time per review (the process's: evaluation is synchronous), checked every 64 steps. */
  maxCpuMilliseconds: number;
}

export const DEFAULT_CEL_LIMITS: Readonly<CelLimits> = Object.freeze({ maxIterations: 100_000, maxCpuMilliseconds: 50 });

const CLOCK_EVERY_STEPS = 64;

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export class CelBudgetExceeded extends Error {
  override readonly name = 'CelBudgetExceeded';
}

/** The budget of one review: shared by every expression evaluated for it. */
export class EvaluationBudget {
  #steps = 0;
  #exceeded: CelBudgetExceeded | undefined;
  #cpuStart: number | undefined;

  constructor(readonly limits: CelLimits = DEFAULT_CEL_LIMITS) {}

  /** Counts one comprehension step; throws once a limit is passed (and on every step after). */
  step(): void {
    if (this.#exceeded) throw this.#exceeded;
    this.#steps++;
    if (this.#steps > this.limits.maxIterations) {
      this.#exceeded = new CelBudgetExceeded(`evaluation exceeded ${this.limits.maxIterations} comprehension steps`);
    } else if (this.#steps === CLOCK_EVERY_STEPS) {
      // Read lazily: most evaluations take a few steps and pay nothing (a clock read costs about
      // as much as a small rule); the first 64 steps are bounded by the step count alone.
      this.#cpuStart = cpuMicros();
    } else if (this.#steps % CLOCK_EVERY_STEPS === 0 && cpuMicros() - (this.#cpuStart ?? 0) > this.limits.maxCpuMilliseconds * 1000) {
      this.#exceeded = new CelBudgetExceeded(`evaluation exceeded ${this.limits.maxCpuMilliseconds} ms of CPU`);
    }
    if (this.#exceeded) throw this.#exceeded;
  }

  /**
   * The limit passed, if one was. CEL's `||` and `&&` absorb an error when the other side
   * decides, so a result alone does not tell: callers check this after every evaluation.
   */
  get exceeded(): CelBudgetExceeded | undefined {
    return this.#exceeded;
  }

  get steps(): number {
    return this.#steps;
  }
}

/** The budget of the evaluation running now (evaluation is synchronous, so one at a time). */
let current: EvaluationBudget | undefined;

/** Runs `evaluate` charging its comprehension steps to `budget`. */
export function withBudget<T>(budget: EvaluationBudget, evaluate: () => T): T {
  const previous = current;
  current = budget;
  try {
    return evaluate();
  } finally {
    current = previous;
  }
}

/** Called by instrumented comprehension steps. */
export function chargeStep(): void {
  current?.step();
}
