/**
 * The commands `npm run local-cluster` prints and docs/getting-started.md shows verbatim
 * (test/local-cluster-walkthrough.test.ts holds them equal); the end-to-end tests run the same ones.
 */
export interface TryItStep {
  /** A stable name the tests use to find the step. */
  id: string;
  command: string;
  /** What to expect, printed as a comment after the command. */
  comment: string;
}

export const TRY_IT: readonly TryItStep[] = [
  { id: 'kubeconfig', command: 'export KUBECONFIG=$PWD/.local-cluster/kubeconfig', comment: 'in a second terminal, from the repository root' },
  { id: 'install', command: 'kubectl apply -k manifests/base', comment: 'install (the cert-manager overlay works the same: -k manifests/overlays/cert-manager)' },
  { id: 'rollout', command: 'kubectl -n kube-admission-server rollout status deployment/kube-admission-server --timeout=180s', comment: 'wait for both Pods, each one the compiled server run as a process' },
  {
    id: 'registered',
    command: 'kubectl wait validatingwebhookconfiguration/kube-admission-server --for=create --timeout=120s',
    // Ready comes first: the leader creates a configuration only once the Service has a ready endpoint, so that no call kube-apiserver makes finds nothing to answer it.
    comment: 'wait for the leader to register the rules (it does so once the Service has a ready Pod)',
  },
  { id: 'pods', command: 'kubectl -n kube-admission-server get deployments,replicasets,pods -o wide', comment: 'Deployment -> ReplicaSet -> Pods, pod-template-hash, pod IPs' },
  { id: 'watch', command: 'kubectl -n kube-admission-server get pods --watch', comment: 'watch the Pods (in a third terminal; Ctrl-C stops it)' },
  { id: 'configurations', command: 'kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations', comment: 'the configurations the leader registered' },
  { id: 'namespace', command: 'kubectl apply -f examples/local-cluster/namespace.yaml', comment: 'a namespace for the examples' },
  { id: 'allowed', command: 'kubectl -n demo apply -f examples/local-cluster/allowed-pod.yaml', comment: 'admitted, with a Warning: the Pod has no app label' },
  {
    id: 'warned',
    command: 'kubectl -n demo apply --dry-run=server -f examples/local-cluster/privileged-pod.yaml',
    comment: 'the shipped policy only warns: a privileged Pod passes with a Warning (--dry-run=server stores nothing)',
  },
  {
    id: 'policy',
    command: 'kubectl apply -f examples/local-cluster/policy-with-default-labels.yaml',
    comment: 'change the policy ConfigMap: deny-privileged to enforce, plus a mutating rule (or: kubectl -n kube-admission-server edit configmap kube-admission-server-policy)',
  },
  {
    id: 'policy-applied',
    command: "kubectl wait mutatingwebhookconfiguration/kube-admission-server --for=jsonpath='{.webhooks[*].clientConfig.service.path}'=/mutate/mutating-ignore-t5/default-labels --timeout=120s",
    // [*], not [0]: on a configuration that has no webhook yet, kubectl fails at once on an index out of bounds instead of waiting.
    comment: 'wait until the server has reloaded it and registered the new rule (the one mutating webhook, its path naming it)',
  },
  { id: 'denied', command: 'kubectl -n demo apply -f examples/local-cluster/privileged-pod.yaml', comment: 'denied now: a privileged container' },
  { id: 'mutated', command: 'kubectl -n demo apply -f examples/local-cluster/mutated-pod.yaml', comment: 'this Pod gets the label kube-admission-server/defaulted=true' },
  { id: 'labels', command: 'kubectl -n demo get pod mutated --show-labels', comment: '' },
  { id: 'restart', command: 'kubectl -n kube-admission-server rollout restart deployment/kube-admission-server', comment: 'roll the Deployment: one new Pod at a time, the old ones stop on SIGTERM' },
  { id: 'rolled', command: 'kubectl -n kube-admission-server rollout status deployment/kube-admission-server --timeout=180s', comment: '' },
  { id: 'logs', command: 'kubectl -n kube-admission-server logs deployment/kube-admission-server --tail=3', comment: "a server's log lines" },
  { id: 'uninstall', command: 'kubectl delete -k manifests/base', comment: 'uninstall' },
  { id: 'gone', command: 'kubectl get mutatingwebhookconfigurations,validatingwebhookconfigurations', comment: 'nothing left: "No resources found"' },
  { id: 'cleanup', command: 'kubectl delete -f examples/local-cluster/namespace.yaml', comment: "and the examples' namespace" },
];

/** The block as printed and as in docs/getting-started.md: each command under its comment. */
export function renderTryIt(): string {
  return TRY_IT.map((s) => (s.comment === '' ? s.command : `# ${s.comment}\n${s.command}`)).join('\n');
}

export function tryItCommand(id: string): string {
  const step = TRY_IT.find((s) => s.id === id);
  if (!step) throw new Error(`no Try-it step ${id}`);
  return step.command;
}
