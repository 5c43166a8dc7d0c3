/** What a pod worker needs from its kubelet. */
import type { ClusterClient } from '../api-client.js';
import type { EventRecorder } from '../events.js';
import type { PodLogs } from './container-logs.js';
import type { PodNetwork } from './pod-network.js';

export interface ContainerExit {
  namespace: string;
  pod: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The Pod was being deleted (SIGTERM from the kubelet), rather than the process ending on its own. */
  terminating: boolean;
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
  /** The compiled server (the image's entrypoint) and its working directory. */
  mainJs: string;
  repoRoot: string;
  /** The API server as pods reach it (their kubeconfig). */
  apiTarget: { url: string; caPem: string };
  issueToken(namespace: string, serviceAccount: string): string;
  revokeToken(token: string): void;
  log(message: string): void;
  /** Multiplies every startup probe's failureThreshold (1: as the Pod says). */
  slowStart: number;
  /** Every container exit, in order. */
  exits: ContainerExit[];
}
