import type { X509Certificate } from 'node:crypto';
import { parseCertificates, parseUsableCertificates } from '../tls/pem.js';
import type { ServingMaterial } from '../tls/types.js';
import { chainRoot } from '../tls/validate.js';

/** Trusted since before anything could call: nothing was registered when the chain was first seen trusted. */
export const ALWAYS = Number.NEGATIVE_INFINITY;

/**
 * Since when the live caBundles have trusted each CA, as this process saw them: a CA counts once
 * it is in every webhook's caBundle (each kube-apiserver verifies with the bundle of the webhook it
 * calls), and its time restarts whenever a snapshot lacks it. While nothing is registered nothing
 * calls, so every chain counts as trusted; the CAs of the first registration then count as trusted
 * ALWAYS (no kube-apiserver can hold an older bundle of a configuration that did not exist).
 * When the API shows the configurations unwritten since an earlier moment (a restart finding
 * them in place), the CAs they hold count from then: a bundle that has not changed since held them.
 */
export class TrustTimeline {
  /** CA fingerprint -> since when every live caBundle holds it (monotonic ms). */
  readonly #since = new Map<string, number>();
  #cas: X509Certificate[] = [];
  /** undefined: no snapshot yet, so nothing is known. */
  #registered: boolean | undefined;

  /**
   * A new snapshot: the caBundle of every live webhook (empty: nothing registered), and since when
   * the API shows them unwritten (same clock as `now`; undefined: it does not show it).
   */
  update(bundles: readonly string[], now: number, unchangedSince?: number): void {
    if (bundles.length === 0) {
      this.#registered = false;
      this.#since.clear();
      this.#cas = [];
      return;
    }
    const firstRegistration = this.#registered === false;
    const [first = [], ...rest] = bundles.map((pem) => parseUsableCertificates(pem));
    const inEvery = first.filter((ca) => rest.every((bundle) => bundle.some((other) => other.fingerprint256 === ca.fingerprint256)));
    const held = new Set(inEvery.map((ca) => ca.fingerprint256));
    for (const fingerprint of this.#since.keys()) if (!held.has(fingerprint)) this.#since.delete(fingerprint);
    const evidence = unchangedSince ?? Number.POSITIVE_INFINITY;
    for (const fingerprint of held) {
      const since = this.#since.get(fingerprint) ?? (firstRegistration ? ALWAYS : now);
      this.#since.set(fingerprint, Math.min(since, evidence));
    }
    this.#cas = inEvery;
    this.#registered = true;
  }

  /** Whether a snapshot has been taken at all. */
  get known(): boolean {
    return this.#registered !== undefined;
  }

  /** Whether anything is registered (undefined before the first snapshot). */
  get registered(): boolean | undefined {
    return this.#registered;
  }

  /** Since when every live caBundle verifies `material`'s chain; undefined: not trusted (or not known yet). */
  trustedSince(material: ServingMaterial): number | undefined {
    if (this.#registered === undefined) return undefined;
    if (!this.#registered) return ALWAYS;
    const [leaf, ...intermediates] = parseCertificates(material.certPem);
    const root = leaf && chainRoot(leaf, intermediates, this.#cas);
    return root ? this.#since.get(root.fingerprint256) : undefined;
  }
}
