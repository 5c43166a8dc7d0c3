/** Policy changes: the install's ConfigMap rewritten with the next version (an edit, a rename, a removal), as `kubectl apply` or a GitOps tool does. */
import type { KubeObject } from '../../../../../local-cluster/fake-apiserver/index.js';
import { clone } from '../../../../../local-cluster/fake-apiserver/index.js';
import type { PolicyChange } from '../policy-history.js';
import { Random } from '../random.js';
import { NS, POLICY_CONFIGMAP } from '../world.js';
import type { OperationContext } from './context.js';

export async function writePolicy(ctx: OperationContext, change: PolicyChange, seed: number): Promise<string> {
  const version = ctx.history.next(change, new Random(seed));
  const configMap = clone(ctx.world.store.get('configmaps', NS, POLICY_CONFIGMAP) as KubeObject);
  configMap['data'] = { 'policy.yaml': version.text };
  await ctx.world.admin.update({ resource: 'configmaps', namespace: NS, name: POLICY_CONFIGMAP }, configMap);
  ctx.history.written(version);
  return `policy v${version.version}: ${version.change}`;
}
