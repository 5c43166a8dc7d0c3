/**
 * Every flag of the interface, with its environment variable and default. The one table that
 * --help, parsing and docs/configuration.md's flag table all come from.
 */

import { CURRENT_KUBERNETES_RELEASE, formatKubernetesVersion } from '../util/kubernetes-version.js';

export type FlagKind = 'port' | 'string' | 'dns-label' | 'dns-subdomain' | 'duration' | 'days' | 'bytes' | 'enum' | 'boolean' | 'list' | 'path' | 'kubernetes-version';

export interface FlagDefinition {
  /** Long flag name without the dashes. */
  name: string;
  env: string;
  kind: FlagKind;
  /** The default as --help shows it (computed defaults are described in words). */
  defaultText: string;
  description: string;
  /** For kind 'enum'. */
  values?: readonly string[];
}

export const FLAGS = [
  { name: 'port', env: 'WEBHOOK_PORT', kind: 'port', defaultText: '8443', description: 'HTTPS port for admission reviews' },
  { name: 'health-port', env: 'HEALTH_PORT', kind: 'port', defaultText: '8080', description: 'plain-HTTP port for /healthz, /readyz and /metrics' },
  { name: 'host', env: 'WEBHOOK_HOST', kind: 'string', defaultText: ':: (dual-stack; 0.0.0.0 without IPv6) in a pod, 127.0.0.1 locally, 0.0.0.0 for dev', description: 'address both listeners bind to' },
  { name: 'service-name', env: 'WEBHOOK_SERVICE_NAME', kind: 'dns-label', defaultText: 'kube-admission-server', description: 'Service in front of the server; the certificate covers <service>.<namespace>.svc' },
  { name: 'namespace', env: 'POD_NAMESPACE', kind: 'dns-label', defaultText: 'the service-account namespace, else default (kube-admission-server, where the manifests install, for dev, evaluate, test, audit and render)', description: 'own namespace: Secrets and the Lease live here; it is never intercepted' },
  { name: 'pod-name', env: 'POD_NAME', kind: 'dns-subdomain', defaultText: 'the host name', description: 'Lease identity and start of the owner chain Pod -> ReplicaSet -> Deployment' },
  { name: 'config-name', env: 'WEBHOOK_CONFIG_NAME', kind: 'dns-subdomain', defaultText: 'kube-admission-server', description: 'name of both webhook configurations' },
  { name: 'tls-mode', env: 'TLS_MODE', kind: 'enum', values: ['generate', 'files'], defaultText: 'generate', description: 'generate a CA and certificate, or load tls.crt/tls.key/ca.crt from --cert-dir' },
  { name: 'cert-dir', env: 'CERT_DIR', kind: 'path', defaultText: './certs', description: 'certificate directory (local generate mode writes here, render only when it is given; files mode reads and watches it)' },
  { name: 'extra-san', env: 'EXTRA_SANS', kind: 'list', defaultText: 'none', description: 'extra DNS names or IPs for generated certificates, comma-separated' },
  { name: 'client-ca', env: 'CLIENT_CA_FILE', kind: 'path', defaultText: 'none', description: 'require client certificates signed by this CA file (kube-apiserver admission kubeconfig)' },
  { name: 'policy-file', env: 'POLICY_FILE', kind: 'path', defaultText: 'the bundled policies/example.yaml (dev and runKubeAdmissionServer: policies/handlers-only.yaml, no rules)', description: 'YAML policy file, watched and reloaded on change' },
  { name: 'kubernetes-version', env: 'TARGET_KUBERNETES_VERSION', kind: 'kubernetes-version', defaultText: `the cluster's, else ${formatKubernetesVersion(CURRENT_KUBERNETES_RELEASE)}`, description: 'kube-apiserver version matchConditions are compiled for, as it compiles a configuration written to it (render, evaluate, test, and a server without a cluster; a server with one reads it from the cluster)' },
  { name: 'kubeconfig', env: 'KUBECONFIG', kind: 'path', defaultText: 'in-cluster when present, else none (local mode)', description: 'kubeconfig of the cluster to register with' },
  { name: 'register', env: 'REGISTER', kind: 'boolean', defaultText: 'on when a cluster is configured', description: 'register the webhook configurations (--no-register to only serve)' },
  { name: 'teardown', env: 'TEARDOWN', kind: 'enum', values: ['auto', 'always', 'never'], defaultText: 'auto', description: 'delete this install\'s configurations on shutdown: auto = when the Deployment is gone, being deleted or scaled to zero (outside a pod: those this process wrote)' },
  { name: 'owner-cluster-role', env: 'OWNER_CLUSTER_ROLE', kind: 'dns-subdomain', defaultText: 'none', description: 'ClusterRole that owns the configurations, so uninstalling garbage-collects them (re-read every reconcile pass)' },
  { name: 'shutdown-timeout', env: 'SHUTDOWN_TIMEOUT', kind: 'duration', defaultText: '5s', description: 'deadline for teardown plus server close on SIGTERM' },
  { name: 'shutdown-delay', env: 'SHUTDOWN_DELAY', kind: 'duration', defaultText: '0s', description: 'keep serving this long after SIGTERM before teardown (endpoint propagation)' },
  { name: 'self-check-timeout', env: 'SELF_CHECK_TIMEOUT', kind: 'duration', defaultText: '30s', description: 'deadline for the TLS self-check before registration' },
  { name: 'lease-duration', env: 'LEASE_DURATION', kind: 'duration', defaultText: '15s', description: 'leader Lease duration' },
  { name: 'lease-renew-deadline', env: 'LEASE_RENEW_DEADLINE', kind: 'duration', defaultText: '10s', description: 'a leader that cannot renew within this steps down' },
  { name: 'lease-retry-period', env: 'LEASE_RETRY_PERIOD', kind: 'duration', defaultText: '2s', description: 'interval between Lease acquire/renew attempts' },
  { name: 'resync-period', env: 'RESYNC_PERIOD', kind: 'duration', defaultText: '60s', description: 'full reconcile of the configurations besides the watch' },
  { name: 'ca-validity', env: 'CA_VALIDITY', kind: 'days', defaultText: '1825d', description: 'validity of a generated CA' },
  { name: 'leaf-validity', env: 'LEAF_VALIDITY', kind: 'days', defaultText: '365d', description: 'validity of a generated serving certificate' },
  { name: 'leaf-renew-before', env: 'LEAF_RENEW_BEFORE', kind: 'days', defaultText: '30d', description: 'renew the serving certificate this long before it expires' },
  { name: 'ca-renew-before', env: 'CA_RENEW_BEFORE', kind: 'days', defaultText: '90d', description: 'roll the CA over this long before it expires' },
  { name: 'ca-overlap', env: 'CA_OVERLAP', kind: 'duration', defaultText: '1h', description: 'keep a CA that left ca.crt (or the generated bundle) in the registered caBundle this long, never past its expiry; 0s registers only the current CAs' },
  { name: 'entry-overlap', env: 'ENTRY_OVERLAP', kind: 'duration', defaultText: '15m', description: 'keep answering a policy entry (a renamed or removed rule) this long after the live configurations stopped routing to it, for kube-apiservers whose caches lag; the leader records such names as long' },
  { name: 'watch-poll-interval', env: 'WATCH_POLL_INTERVAL', kind: 'duration', defaultText: '10s', description: 'poll interval of the certificate and policy watchers (besides file events)' },
  { name: 'reports', env: 'REPORTS', kind: 'enum', values: ['off', 'metrics', 'objects'], defaultText: 'off', description: 'background audit on the leader: objects = report objects, a violations gauge and logs (metrics and logs only, said at start, where the report CRDs are missing); metrics = the gauge and logs only; off = none' },
  { name: 'reports-api', env: 'REPORTS_API', kind: 'enum', values: ['openreports', 'wgpolicyk8s'], defaultText: 'openreports', description: 'the reports written: openreports.io/v1alpha1 Report and ClusterReport, or wgpolicyk8s.io/v1alpha2 PolicyReport and ClusterPolicyReport' },
  { name: 'reports-events', env: 'REPORTS_EVENTS', kind: 'boolean', defaultText: 'off', description: 'a Kubernetes Event on an object when a violation of it first appears (rate limited)' },
  { name: 'reports-max-bytes', env: 'REPORTS_MAX_BYTES', kind: 'bytes', defaultText: '96Ki', description: 'no report object is larger (its JSON); a namespace with more results gets several, split by object' },
  { name: 'log-level', env: 'LOG_LEVEL', kind: 'enum', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], defaultText: 'info', description: 'log level' },
  { name: 'log-format', env: 'LOG_FORMAT', kind: 'enum', values: ['json', 'pino'], defaultText: 'json', description: 'json: "level":"info" and an ISO-8601 time; pino: numeric level and epoch milliseconds' },
] as const satisfies readonly FlagDefinition[];

export type FlagName = (typeof FLAGS)[number]['name'];
