/** Every invariant violation of a run, counted per invariant, the first ones kept in full. */

export type Invariant = 'I1' | 'I2' | 'I3' | 'I4' | 'I5';

export const INVARIANTS: Record<Invariant, string> = {
  I1: 'no admission call fails for a reason an operation caused (TLS, no endpoints, refused, timeout, a cut connection but the close race)',
  I2: 'no call to a webhook enforcing in the live configuration is answered "not served", fails open, or is decided against its rule',
  I3: 'the live configurations (the store and every kube-apiserver\'s cache) converge to the newest policy file within the bound after every step',
  I4: 'every Lease is released at a clean exit or expires, and an uninstall leaves nothing',
  I5: 'every process exits when asked, within its deadline, and only then',
};

export interface Violation {
  invariant: Invariant;
  atMs: number;
  what: string;
}

const KEPT_PER_INVARIANT = 12;

export class Ledger {
  readonly counts: Record<Invariant, number> = { I1: 0, I2: 0, I3: 0, I4: 0, I5: 0 };
  readonly kept: Violation[] = [];

  constructor(private readonly now: () => number, private readonly echo: (line: string) => void) {}

  add(invariant: Invariant, what: string): void {
    this.counts[invariant]++;
    const violation = { invariant, atMs: Math.round(this.now()), what };
    if (this.kept.filter((v) => v.invariant === invariant).length < KEPT_PER_INVARIANT) this.kept.push(violation);
    this.echo(`VIOLATION ${invariant} at ${(violation.atMs / 1000).toFixed(1)} s: ${what}`);
  }

  get total(): number {
    return Object.values(this.counts).reduce((sum, n) => sum + n, 0);
  }
}
