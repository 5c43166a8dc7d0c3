/** What a pod worker needs from its kubelet. */
import type { ClusterClient } from '../api-client.js';
import type { EventRecorder } from '../events.js';
import type { PodLogs } from './container-logs.js';
import type { LocalImages } from './images.js';
import type { PodNetwork } from './pod-network.js';

export interface ContainerExit {
  namespace: string;
  pod: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The Pod was being deleted (SIGTERM from the kubelet), rather than the process ending on its own. */
  terminating: boolean;
  pid: number;
  /** Date.now() of the process's start, of the kubelet's SIGTERM (when it sent one) and of the exit. */
  startedAt: number;
  sigtermAt?: number;
  exitedAt: number;
  /** The grace period the kubelet gave after its SIGTERM (it sent SIGKILL when it ran out). */
  graceSeconds?: number;
  /** The last lines of its log when it did not exit 0. */
  lastLines?: string;
}

export interface KubeletDeps {
  /** The kubelet's own client (system:node:<node>). */
  client: ClusterClient;
  /** The scheduler's client, for the binding. */
  scheduler: ClusterClient;
  events: EventRecorder;
  network: PodNetwork;
  logs: PodLogs;
  /** Where pod directories live. */
  dir: string;
  nodeName: string;
  /** What images run here: this repository's working tree, or the local docker engine's images. */
  images: LocalImages;
  /** The API server as pods reach it (their kubeconfig). */
  apiTarget: { url: string; caPem: string };
  issueToken(namespace: string, serviceAccount: string): string;
  revokeToken(token: string): void;
  log(message: string): void;
  /** Multiplies every startup probe's failureThreshold (1: as the Pod says). */
  slowStart: number;
  /** Every container exit, in order. */
  exits: ContainerExit[];
  /** The delay before one Pod's volumes follow a ConfigMap or Secret change. */
  volumeSyncDelayMs: () => number;
}
