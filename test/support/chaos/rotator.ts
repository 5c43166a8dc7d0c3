/**
 * Certificate rotations in files mode, through one kubelet-style Secret volume per replica (kubelet
 * updates each pod's volume on its own, so the volumes are written one after the other).
 *
 * A leaf renewal swaps tls.crt/tls.key under the same CA. A CA rollover is done the only way that
 * never breaks a call (the cert-manager + trust-manager way): the new CA joins ca.crt first and the
 * rollover waits until the registered caBundle trusts it; then the leaves are re-issued by the new
 * CA and the rollover waits until every replica serves one; only then is the old CA dropped.
 */
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import type { KeyedCertificate } from '../../../src/tls/certificates.js';
import { servingSans } from '../../../src/tls/sans.js';
import { AtomicWriter } from '../atomic-writer.js';
import { NAME, NAMESPACE } from '../cluster-harness.js';
import { servedBy } from '../served-certificate.js';
import { makeCa, makeLeaf } from '../tls-fixtures.js';
import { until } from './wait.js';

const SERVICE_HOST = `${NAME}.${NAMESPACE}.svc`;
const SANS = servingSans({ serviceName: NAME, namespace: NAMESPACE, local: false, extraSans: [] });

/** SHA-256 fingerprints of the certificates in a PEM bundle, sorted: bundles compare by content. */
export function bundleFingerprints(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block).fingerprint256).sort();
}

export interface RolloverWaits {
  /** Resolves once the registered caBundle holds exactly these CAs. */
  bundleRegistered(fingerprints: string[]): Promise<void>;
  /** The ports of the replicas serving now. */
  servingPorts(): number[];
}

export class MountedSecretRotator {
  #cas: KeyedCertificate[];
  #leaf: KeyedCertificate;
  readonly #volumes = new Map<string, AtomicWriter>();
  leafRenewals = 0;
  caRollovers = 0;

  private constructor(ca: KeyedCertificate, leaf: KeyedCertificate, private readonly dir: string) {
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
    await waits.bundleRegistered(bundleFingerprints(this.caBundlePem));
    this.#leaf = await makeLeaf(next, SANS);
    await this.#publish();
    await this.#untilEveryReplicaServes('every replica serves the leaf of the new CA', waits, timeoutMs);
    this.#cas = [next];
    await this.#publish();
    await waits.bundleRegistered(bundleFingerprints(this.caBundlePem));
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
