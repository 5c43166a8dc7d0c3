import type { KubeApi } from './client.js';
import { callApi } from './request-deadline.js';

/** The ClusterRole that owns the configurations: deleting the install garbage-collects them. */
export async function readOwnerClusterRole(api: KubeApi, name: string, signal: AbortSignal): Promise<{ name: string; uid: string }> {
  const role = await callApi(signal, (o) => api.rbac.readClusterRole({ name }, o));
  const uid = role.metadata?.uid;
  if (!uid) throw new Error(`ClusterRole ${name} has no uid`);
  return { name, uid };
}
