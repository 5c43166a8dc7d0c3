/**
 * Certificate rotations in files mode, through one kubelet-style Secret volume per replica (kubelet
 * updates each pod's volume on its own, so the volumes are written one after the other).
 *
 * A leaf renewal swaps tls.crt/tls.key under the same CA. A CA rollover is done the only way that
 * never breaks a call (the cert-manager + trust-manager way): the new CA joins ca.crt first and the
 * rollover waits until the registered caBundle trusts it; then the leaves are re-issued by the new
 * CA and the rollover waits until every replica serves one; only then is the old CA dropped from
 * ca.crt. The server keeps a CA that left ca.crt in the registered caBundle for --ca-overlap
 * (default 1 h, which the chaos replicas run with), so the old CA stays registered for the rest of
 * any run shorter than that.
 */
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import type { CertificateAndKey } from '../tls/cert-builder.js';
import { servingSans } from '../../../src/tls/sans.js';
import { AtomicWriter } from '../../../local-cluster/util/atomic-writer.js';
import { NAME, NAMESPACE } from '../kube/cluster-harness.js';
import { servedBy } from '../tls/served-certificate.js';
import { makeCa, makeLeaf } from '../tls/tls-fixtures.js';
import { until } from './wait.js';

const SERVICE_HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });

/** SHA-256 fingerprints of the certificates in a PEM bundle, sorted: bundles compare by content. */
export function bundleFingerprints(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block).fingerprint256).sort();
}

/** The server's --ca-overlap default, which the chaos replicas keep. */
export const CA_OVERLAP_MS = 60 * 60 * 1000;
/** How late the leader may notice that a CA left ca.crt (its volume, its poll, a pass). */
const RETIREMENT_LAG_MS = 60 * 1000;

/**
 * What the registered caBundle must hold (fingerprints): the CAs in ca.crt plus those that left
 * it within the overlap (`required`); near the end of an overlap a CA may or may not be there yet
 * (`allowed` adds those).
 */
export interface BundleExpectation {
  required: string[];
  allowed: string[];
}

export interface RolloverWaits {
  /** Resolves once the registered caBundle meets the expectation. */
  bundleRegistered(expectation: BundleExpectation): Promise<void>;
  /** The ports of the replicas serving now. */
  servingPorts(): number[];
}

export class MountedSecretRotator {
  #cas: CertificateAndKey[];
  #leaf: CertificateAndKey;
  /** CAs dropped from ca.crt, with when (epoch ms). */
  readonly #retired: { fingerprint: string; at: number }[] = [];
  readonly #volumes = new Map<string, AtomicWriter>();
  leafRenewals = 0;
  caRollovers = 0;

  private constructor(ca: CertificateAndKey, leaf: CertificateAndKey, private readonly dir: string) {
    this.#cas = [ca];
    this.#leaf = leaf;
  }

  static async create(dir: string): Promise<MountedSecretRotator> {
    const ca = await makeCa(new Date(), 365, 'chaos CA 0');
    return new MountedSecretRotator(ca, await makeLeaf(ca, SANS), dir);
  }

  /** The bundle in ca.crt now. */
  get caBundlePem(): string {
    return this.#cas.map((ca) => ca.certPem).join('');
  }

  /** The registered caBundle expected now (see BundleExpectation). */
  expectedBundle(now = Date.now()): BundleExpectation {
    const current = bundleFingerprints(this.caBundlePem);
    const within = (slackMs: number): string[] => this.#retired.filter((r) => now < r.at + CA_OVERLAP_MS + slackMs).map((r) => r.fingerprint);
    return {
      required: [...new Set([...current, ...within(0)])].sort(),
      allowed: [...new Set([...current, ...within(RETIREMENT_LAG_MS)])].sort(),
    };
  }

  /** A new pod's volume, holding what the Secret holds now; returns its directory. */
  async mount(podName: string): Promise<string> {
    const volume = new AtomicWriter(join(this.dir, `secret-${podName}`));
    this.#volumes.set(podName, volume);
    await volume.write(this.#payload());
    return volume.targetDir;
  }

  unmount(podName: string): void {
    this.#volumes.delete(podName);
  }

  /** A new leaf from the same CA; counted once every serving replica presents it on a new connection. */
  async renewLeaf(waits: Pick<RolloverWaits, 'servingPorts'>, timeoutMs: number): Promise<void> {
    this.#leaf = await makeLeaf(this.#cas.at(-1)!, SANS);
    await this.#publish();
    await this.#untilEveryReplicaServes('every replica serves the renewed leaf', waits, timeoutMs);
    this.leafRenewals++;
  }

  async rollCa(waits: RolloverWaits, timeoutMs: number): Promise<void> {
    const next = await makeCa(new Date(), 365, `chaos CA ${this.caRollovers + 1}`);
    this.#cas = [this.#cas.at(-1)!, next];
    await this.#publish();
    await waits.bundleRegistered(this.expectedBundle());
    this.#leaf = await makeLeaf(next, SANS);
    await this.#publish();
    await this.#untilEveryReplicaServes('every replica serves the leaf of the new CA', waits, timeoutMs);
    const old = this.#cas[0]!;
    this.#cas = [next];
    this.#retired.push({ fingerprint: new X509Certificate(old.certPem).fingerprint256, at: Date.now() });
    await this.#publish();
    // The old CA left ca.crt but stays registered for the overlap: the bundle must still hold it.
    await waits.bundleRegistered(this.expectedBundle());
    this.caRollovers++;
  }

  /** Judged by what clients see: a new verified connection to each replica gets the current leaf. */
  async #untilEveryReplicaServes(what: string, waits: Pick<RolloverWaits, 'servingPorts'>, timeoutMs: number): Promise<void> {
    const serial = new X509Certificate(this.#leaf.certPem).serialNumber;
    await until(what, async () => {
      const ports = waits.servingPorts();
      const served = await Promise.all(ports.map((port) => servedBy(port, SERVICE_HOST, this.caBundlePem).then((s) => s.served.serialNumber, () => '')));
      return ports.length > 0 && served.every((s) => s === serial);
    }, { timeoutMs, everyMs: 100 });
  }

  #payload(): Record<string, string> {
    return { 'tls.crt': this.#leaf.certPem, 'tls.key': this.#leaf.keyPem, 'ca.crt': this.caBundlePem };
  }

  async #publish(): Promise<void> {
    for (const volume of this.#volumes.values()) await volume.write(this.#payload());
  }
}
