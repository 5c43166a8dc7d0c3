/**
 * The run's only source of chance: every choice a chaos run makes (which operation, when, how
 * long, which kube-apiserver) is drawn from one seeded generator, up front, so a seed names one
 * schedule and replays it.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

const WARM_UP_DRAWS = 32;

export class Random {
  readonly #rng;

  constructor(readonly seed: number) {
    if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`a seed is a whole number from 0, got ${seed}`);
    this.#rng = xoroshiro128plus(seed);
    // The first outputs of a small seed are weakly mixed (seeds 1, 2, 3 began alike): skip them.
    for (let i = 0; i < WARM_UP_DRAWS; i++) this.#rng.next();
  }

  /** A whole number from `from` to `to`, both included. */
  int(from: number, to: number): number {
    return uniformInt(this.#rng, from, to);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return uniformFloat64(this.#rng) < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('nothing to pick from');
    return items[this.int(0, items.length - 1)]!;
  }

  /** An item drawn with the given weights (each >= 0, not all 0). */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let at = uniformFloat64(this.#rng) * total;
    for (const [item, weight] of items) {
      if (at < weight) return item;
      at -= weight;
    }
    return items.at(-1)![0];
  }
}
