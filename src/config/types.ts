/** The one typed, validated configuration every part of the server reads. */
import type { KubernetesVersion } from '../util/kubernetes-version.js';

/** generate: the server makes and rotates its CA; files: it loads tls.crt, tls.key and ca.crt from --cert-dir. */
export type TlsMode = 'generate' | 'files';
/** When the configurations are deleted on shutdown (auto: only when the install is going away). */
export type TeardownPolicy = 'auto' | 'always' | 'never';
/** pino's log levels. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
/** json: level names and ISO-8601 times; pino: pino's numbers. */
export type LogFormat = 'json' | 'pino';
/** The leader's background audit: report objects (and the gauge), the gauge and logs only, or none. */
export type ReportsMode = 'off' | 'metrics' | 'objects';
/** The report API written: OpenReports, or wgpolicyk8s for tools that read the older group. */
export type ReportsApi = 'openreports' | 'wgpolicyk8s';

/** The server's whole configuration, from flags and environment (docs/configuration.md). */
export interface Config {
  /** HTTPS port for admission reviews. */
  port: number;
  /** Plain-HTTP port for /healthz, /readyz and /metrics. */
  healthPort: number;
  /** Address both listeners bind to. */
  host: string;
  serviceName: string;
  namespace: string;
  podName: string;
  /** Name of both the Mutating- and the ValidatingWebhookConfiguration. */
  configName: string;
  tlsMode: TlsMode;
  certDir: string;
  /**
   * Whether generate mode without a cluster may write --cert-dir: always for the server; for
   * render only when --cert-dir (or CERT_DIR) names it, so that a command that prints leaves no key
   * material behind (an existing directory is only read).
   */
  certDirWritable: boolean;
  /** Extra subject alternative names for generated serving certificates. */
  extraSans: string[];
  /** Optional CA file; when set, clients must present a certificate it signed. */
  clientCaFile: string | undefined;
  policyFile: string;
  /** --kubernetes-version: the kube-apiserver matchConditions are compiled for, when no cluster says. */
  kubernetesVersion: KubernetesVersion | undefined;
  /** Path of a kubeconfig, or undefined for in-cluster / no cluster. */
  kubeconfig: string | undefined;
  /** True when the in-cluster service account is used (no kubeconfig, a pod's token mounted). */
  inCluster: boolean;
  /**
   * True when this process runs in a Kubernetes pod: kubelet sets KUBERNETES_SERVICE_HOST in every
   * container, and the manifests pass the pod's name (POD_NAME). Teardown `auto` tells "no pod at
   * all" (a developer's machine: delete) from "my pod cannot be read" (keep) by it.
   */
  inPod: boolean;
  clusterConfigured: boolean;
  register: boolean;
  teardown: TeardownPolicy;
  /** ClusterRole that registered configurations get as their owner (garbage collection on uninstall). */
  ownerClusterRole: string | undefined;
  shutdownTimeoutMs: number;
  shutdownDelayMs: number;
  selfCheckTimeoutMs: number;
  /**
   * The dev loop: the address kube-apiserver dials to reach this process (`clientConfig.url`
   * instead of the Service; the port defaults to the one listened on), with no Lease (it is alone
   * under its own configuration name) and its certificates kept in --cert-dir, not in a Secret.
   */
  reachableAt?: { host: string; port: number | undefined };
  /** Leader election on a Lease in the own namespace (client-go's defaults). */
  leaseName: string;
  leaseDurationMs: number;
  leaseRenewDeadlineMs: number;
  leaseRetryPeriodMs: number;
  /** Reconcile resync period. */
  resyncPeriodMs: number;
  /** Certificate lifetimes for generate mode. */
  caValidityDays: number;
  leafValidityDays: number;
  leafRenewBeforeDays: number;
  caRenewBeforeDays: number;
  /** How long a CA that left the current bundle stays in the registered caBundle (replicas reload at different moments). */
  caOverlapMs: number;
  /** How long an entry the live configurations stopped routing to stays answered, and recorded by the leader (kube-apiservers' caches lag). */
  entryOverlapMs: number;
  /** Poll interval of the file watchers (certificates, policy), fallback to fs events. */
  watchPollIntervalMs: number;
  /** The leader's background audit (docs/reports.md). */
  reports: ReportsMode;
  reportsApi: ReportsApi;
  /** An Event on an object when a violation of it first appears. */
  reportsEvents: boolean;
  /** No report object's JSON is larger. */
  reportsMaxBytes: number;
  logLevel: LogLevel;
  /** json: level names and ISO-8601 times, as log pipelines expect; pino: pino's numbers. */
  logFormat: LogFormat;
}
