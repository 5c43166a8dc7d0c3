/** How one step of a bounded sequence ended (the shutdown's summary line, and the steps that report into it). */
export type StepOutcome = 'ok' | 'skipped' | 'failed' | 'timed-out';

export interface StepReport {
  step: string;
  outcome: StepOutcome;
  ms: number;
  detail?: string;
}
