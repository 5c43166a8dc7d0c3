/**
 * What bounds one CEL evaluation, in Kubernetes' model (k8s.io/apiserver/pkg/apis/cel/config.go):
 * a deterministic runtime cost, counted as the evaluation goes, against a limit per expression
 * (PerCallLimit) and a budget per rule and review (RuntimeCELCostBudget). The same object always
 * costs the same, on any machine and under any load, so it always gets the same answer.
 *
 * The units: one per node of a comprehension's step, each time the step runs (a loop's body
 * costs what it contains), plus what cel-go and Kubernetes' library charge for functions whose
 * work grows with their arguments (string search and case, split, join, replace, regular
 * expressions, list traversal, concatenation); call-costs.ts has the table. Everything else
 * is bounded by the expression's size, checked at load.
 *
 * A CPU-time ceiling stays as a last resort, well above what the budget allows: it fires only
 * if the cost model failed to bound an evaluation, and says so.
 */

export interface CelLimits {
  /** Cost units one expression may use per evaluation (Kubernetes' PerCallLimit). */
  perExpressionCost: number;
  /** Cost units of all of a rule's expressions for one review (Kubernetes' RuntimeCELCostBudget). */
  ruleCost: number;
  /** The last-resort guard: CPU time per review (the main thread's, where evaluation runs). */
  cpuCeilingMilliseconds: number;
}

export const DEFAULT_CEL_LIMITS: Readonly<CelLimits> = Object.freeze({ perExpressionCost: 1_000_000, ruleCost: 10_000_000, cpuCeilingMilliseconds: 3_000 });

/** How many units pass between two reads of the CPU clock (the guard is coarse on purpose). */
const CLOCK_EVERY_UNITS = 4096;

/**
 * The main thread's CPU time: evaluation is synchronous on it. The process's would count the
 * garbage collector's helper threads too, which a large object keeps busy in parallel.
 */
function cpuMicros(): number {
  const { user, system } = typeof process.threadCpuUsage === 'function' ? process.threadCpuUsage() : process.cpuUsage();
  return user + system;
}

/** The rule ran out: nothing more is evaluated for this review (kube-apiserver's words). */
export class CelBudgetExceeded extends Error {
  override readonly name: string = 'CelBudgetExceeded';
}

/** One expression passed the per-expression limit: an error of that expression (cel-go's words). */
export class CelCostLimitExceeded extends Error {
  override readonly name = 'CelCostLimitExceeded';
}

/** The CPU guard fired: the cost model did not bound this evaluation. Reported as such. */
export class CelCpuCeilingExceeded extends CelBudgetExceeded {
  override readonly name = 'CelCpuCeilingExceeded';
}

export const OUT_OF_BUDGET_MESSAGE = 'validation failed due to running out of cost budget, no further validation rules will be run';
export const COST_LIMIT_MESSAGE = 'operation cancelled: actual cost limit exceeded';

/** The budget of one review: shared by every expression evaluated for it. */
export class EvaluationBudget {
  #total = 0;
  #expression = 0;
  #expressionExceeded: CelCostLimitExceeded | undefined;
  #exceeded: CelBudgetExceeded | undefined;
  #cpuStart: number | undefined;
  #nextClockAt = CLOCK_EVERY_UNITS;

  constructor(readonly limits: CelLimits = DEFAULT_CEL_LIMITS) {}

  /**
   * Counts `units`; throws once a limit is passed (and on every charge after). `work` false: a
   * fixed charge standing for no computation here (an authorizer check's 350,000): it counts
   * against the limits but does not bring the CPU guard's next clock read closer.
   */
  charge(units: number, work = true): void {
    this.#check();
    if (!work) this.#nextClockAt += units;
    this.#total += units;
    this.#expression += units;
    if (this.#total > this.limits.ruleCost) this.#exceeded = new CelBudgetExceeded(OUT_OF_BUDGET_MESSAGE);
    else if (this.#expression > this.limits.perExpressionCost) this.#expressionExceeded = new CelCostLimitExceeded(COST_LIMIT_MESSAGE);
    else if (this.#total >= this.#nextClockAt) this.#readClock();
    this.#check();
  }

  #readClock(): void {
    this.#nextClockAt = this.#total + CLOCK_EVERY_UNITS;
    // Read lazily: most rules never get here, and they pay nothing.
    if (this.#cpuStart === undefined) {
      this.#cpuStart = cpuMicros();
      return;
    }
    const spent = (cpuMicros() - this.#cpuStart) / 1000;
    if (spent > this.limits.cpuCeilingMilliseconds) {
      this.#exceeded = new CelCpuCeilingExceeded(
        `stopped by the last-resort CPU guard after ${this.limits.cpuCeilingMilliseconds} ms of CPU, at ${this.#total} cost units: the cost budget did not bound this evaluation (a defect: please report the rule)`,
      );
    }
  }

  #check(): void {
    if (this.#exceeded) throw this.#exceeded;
    if (this.#expressionExceeded) throw this.#expressionExceeded;
  }

  /**
   * Starts counting one expression against the per-expression limit; returns what to pass to
   * `leave` when it is done (a variable evaluated inside another expression has its own count).
   */
  enter(): { units: number; exceeded: CelCostLimitExceeded | undefined } {
    const saved = { units: this.#expression, exceeded: this.#expressionExceeded };
    this.#expression = 0;
    this.#expressionExceeded = undefined;
    return saved;
  }

  leave(saved: { units: number; exceeded: CelCostLimitExceeded | undefined }): void {
    this.#expression = saved.units;
    this.#expressionExceeded = saved.exceeded;
  }

  /**
   * The limit passed in the expression running now, if one was. CEL's `||` and `&&` absorb an
   * error when the other side decides, so a result alone does not tell: callers check this
   * after every evaluation.
   */
  get exceeded(): CelBudgetExceeded | CelCostLimitExceeded | undefined {
    return this.#exceeded ?? this.#expressionExceeded;
  }

  /** Cost units charged so far, over every expression. */
  get units(): number {
    return this.#total;
  }
}

/** The budget of the evaluation running now (evaluation is synchronous, so one at a time). */
let current: EvaluationBudget | undefined;

/** Runs `evaluate` charging its cost to `budget`, counted as one expression. */
export function withBudget<T>(budget: EvaluationBudget, evaluate: () => T): T {
  const previous = current;
  const saved = budget.enter();
  current = budget;
  try {
    return evaluate();
  } finally {
    current = previous;
    budget.leave(saved);
  }
}

/** One step of a library macro's loop (library/bound-evaluation.ts): charged like a comprehension step. */
export function chargeStep(units = 1): void {
  current?.charge(units);
}

/** Called by instrumented nodes and library functions whose work grows with their arguments. */
export function chargeCost(units: number): void {
  current?.charge(units);
}

/** A fixed cost Kubernetes charges for a call whose work happens elsewhere (an authorizer check). */
export function chargeFixedCost(units: number): void {
  current?.charge(units, false);
}
