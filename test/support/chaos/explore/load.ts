/**
 * The steady admission load: Pod creates with dryRun=All through the API's front door, each on a
 * new connection, so the load balancer spreads them over every kube-apiserver (each admits with
 * its own caches and its own connection pools to the webhook). Three kinds of Pod, named so that
 * each webhook call can be judged by what it was asked (`chaos-<n>-<class>`): compliant (every
 * policy version admits it), privileged (the anchor rule, always enforcing, must refuse it), host
 * (the host-namespaces rule refuses it while it exists and enforces).
 *
 * A write that never reached admission (no kube-apiserver up, its connection cut by a restart) is
 * no admission outcome: counted apart, never hidden.
 */
import { rawRequest } from '../../../../local-cluster/fake-apiserver/raw-client.js';
import { PacedWorkers } from '../paced-workers.js';
import { LOAD_NAMESPACE } from './world.js';

export type ObjectClass = 'compliant' | 'privileged' | 'host';
const CLASSES: readonly ObjectClass[] = ['compliant', 'privileged', 'compliant', 'host'];

export interface LoadCounts {
  sent: number;
  byClass: Record<ObjectClass, number>;
  admitted: number;
  denied: number;
  /** Refused with "failed calling webhook" (a failed call under failurePolicy Fail). */
  failedCall: number;
  /** Never reached admission: refused or cut by the control plane. */
  controlPlane: number;
  /** Any other answer (an unexpected status). */
  other: number;
  otherSamples: string[];
}

export const classOfPod = (name: string): ObjectClass | undefined => /^chaos-\d+-(compliant|privileged|host)$/.exec(name)?.[1] as ObjectClass | undefined;

function podFor(index: number, objectClass: ObjectClass): Record<string, unknown> {
  const container: Record<string, unknown> = { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '10m', memory: '16Mi' } } };
  if (objectClass === 'privileged') container['securityContext'] = { privileged: true };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `chaos-${index}-${objectClass}`, labels: { app: 'chaos' } },
    spec: { ...(objectClass === 'host' ? { hostNetwork: true } : {}), containers: [container] },
  };
}

export class AdmissionLoad {
  readonly counts: LoadCounts = {
    sent: 0,
    byClass: { compliant: 0, privileged: 0, host: 0 },
    admitted: 0,
    denied: 0,
    failedCall: 0,
    controlPlane: 0,
    other: 0,
    otherSamples: [],
  };
  readonly #workers: PacedWorkers;
  #index = 0;

  constructor(private readonly api: { url: string; caPem: string; token: string }, ratePerSecond: number, workers: number) {
    this.#workers = new PacedWorkers({ ratePerSecond, workers, task: () => this.#one() });
  }

  start(): void {
    this.#workers.start();
  }

  async stop(): Promise<LoadCounts> {
    await this.#workers.stop();
    return this.counts;
  }

  async #one(): Promise<void> {
    const index = this.#index++;
    const objectClass = CLASSES[index % CLASSES.length]!;
    this.counts.sent++;
    this.counts.byClass[objectClass]++;
    let reply;
    try {
      reply = await rawRequest(this.api, 'POST', `/api/v1/namespaces/${LOAD_NAMESPACE}/pods?dryRun=All&fieldManager=chaos-load`, { body: podFor(index, objectClass), timeoutMs: 40_000 });
    } catch {
      this.counts.controlPlane++; // refused, reset or cut: the request never got an answer from admission
      return;
    }
    const message = String((reply.json as { message?: unknown } | undefined)?.message ?? '');
    if (reply.status === 201) this.counts.admitted++;
    else if (reply.status === 403 && /^admission webhook ".+" denied the request/.test(message)) this.counts.denied++;
    else if (/failed calling webhook/.test(message)) this.counts.failedCall++;
    else if (reply.status === 503 || reply.status === 429) this.counts.controlPlane++;
    else {
      this.counts.other++;
      if (this.counts.otherSamples.length < 10) this.counts.otherSamples.push(`${reply.status} ${objectClass}: ${message.slice(0, 300)}`);
    }
  }
}
