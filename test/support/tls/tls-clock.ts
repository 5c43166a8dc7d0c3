/** A settable clock for the `now` option of the tls sources. */
export class TestClock {
  private ms: number;

  constructor(start: Date | string) {
    this.ms = new Date(start).getTime();
  }

  readonly now = (): Date => new Date(this.ms);

  advance(ms: number): Date {
    this.ms += ms;
    return this.now();
  }

  set(to: Date): void {
    this.ms = to.getTime();
  }
}
