/**
 * The local cluster: the Kubernetes API test double with admission on every write, a
 * controller manager (Deployments, ReplicaSets, endpoints, namespaces, garbage collection), a
 * kubelet that runs Pods of the kube-admission-server image as the compiled server, kube-proxy
 * for the webhook's Service (connection-time DNAT to a ready endpoint), and a cert-manager stand-in. Still not a cluster: one node, no
 * scheduler, no containers or network namespaces, no PodSecurity or other built-in admission
 * plugins but NamespaceLifecycle. See local-cluster/README.md.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createWebhookAdmission, type CallRecord, type WebhookAdmission } from '../admission-caller/index.js';
import { startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '../fake-apiserver/index.js';
import { ClusterClient } from './api-client.js';
import { CertManagerStandIn, CLUSTER_RESOURCE_NAMESPACE } from './cert-manager/controller.js';
import { certManagerCrds } from './cert-manager/crds.js';
import { ControllerManager } from './controller-manager.js';
import { Kubelet } from './kubelet/kubelet.js';
import { KubeProxy } from './kube-proxy.js';

export interface LocalClusterOptions {
  /** Working directory: the kubeconfig and the Pods' directories. Created; emptied on close. */
  dir: string;
  /** API port; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** Install cert-manager's CRDs and the stand-in controller (default true). */
  certManager?: boolean;
  /** Lines about what the cluster does (container exits, controller errors). */
  log?: (message: string) => void;
  /** The kubelet's allowance for a slow machine: see KubeletOptions.slowStart. */
  slowStart?: number;
  /** kube-proxy's delay before endpoint changes take effect (default 250 ms). */
  proxySyncDelayMs?: number;
  /** The control plane's kube-apiservers: a count or each one's lag (default three, no lag). */
  apiservers?: FakeApiServerOptions['apiservers'];
  /** Every webhook call kube-apiserver makes, as it finishes. */
  onCall?: (call: CallRecord) => void;
  /** How long after a ConfigMap or Secret change the kubelet rewrites one Pod's volumes (default: at once). */
  volumeSyncDelayMs?: () => number;
}

/** A production control plane runs several kube-apiservers behind one address. */
export const DEFAULT_APISERVERS = 3;

export interface LocalCluster {
  api: FakeApiServer;
  /** The administrator's kubeconfig (system:masters), for kubectl. */
  kubeconfig: string;
  kubelet: Kubelet;
  proxy: KubeProxy;
  admission: WebhookAdmission;
  /** Stops the Pods' processes (SIGTERM, SIGKILL after `graceSeconds`), the controllers and the API. */
  close(graceSeconds?: number): Promise<void>;
}

const CERT_MANAGER_USER = { username: 'system:serviceaccount:cert-manager:cert-manager', groups: ['system:masters', 'system:authenticated'] };

export async function startLocalCluster(options: LocalClusterOptions): Promise<LocalCluster> {
  const log = options.log ?? (() => undefined);
  await mkdir(options.dir, { recursive: true });
  const api = await startFakeApiServer({ port: options.port ?? 0, host: options.host, finalizers: true, apiservers: options.apiservers ?? DEFAULT_APISERVERS });
  const proxy = new KubeProxy(api.store, options.proxySyncDelayMs);
  const admission = createWebhookAdmission({
    store: api.store,
    resolveService: (namespace, name, port) => proxy.resolve(namespace, name, port),
    newAgent: () => proxy.agent(),
    onCallError: (call) => log(`admission: failed calling webhook "${call.webhook}" (${call.phase}): ${call.error ?? ''}`),
    onCall: options.onCall,
  });
  api.setAdmission(admission.admission);
  proxy.start();
  const controllers = new ControllerManager(api, log);
  controllers.start();
  const kubelet = new Kubelet({ api, dir: options.dir, log, slowStart: options.slowStart, volumeSyncDelayMs: options.volumeSyncDelayMs });
  await kubelet.start();
  let certManager: CertManagerStandIn | undefined;
  if (options.certManager ?? true) {
    api.store.createNamespace(CLUSTER_RESOURCE_NAMESPACE);
    for (const crd of certManagerCrds()) api.store.put('customresourcedefinitions', crd);
    certManager = new CertManagerStandIn(api.store, new ClusterClient(api, CERT_MANAGER_USER), log);
    certManager.start();
  }
  const kubeconfig = join(options.dir, 'kubeconfig');
  await api.writeKubeconfig(kubeconfig, { name: 'local-cluster' });
  let closed: Promise<void> | undefined;
  return {
    api,
    kubeconfig,
    kubelet,
    proxy,
    admission,
    close: (graceSeconds = 5) => {
      closed ??= (async () => {
        await kubelet.stop(graceSeconds);
        certManager?.stop();
        controllers.stop();
        proxy.close();
        admission.close();
        await api.close();
        await rm(join(options.dir, 'pods'), { recursive: true, force: true });
        await rm(kubeconfig, { force: true });
      })();
      return closed;
    },
  };
}
