import type { KubeConfig } from '@kubernetes/client-node';
import { getJson, type ListTarget } from './paged-list.js';

/** A listable resource as discovery describes it. */
export interface DiscoveredResource extends ListTarget {
  group: string;
  version: string;
  /** Plural resource name, e.g. `deployments`. */
  resource: string;
  namespaced: boolean;
  /** The group's preferred version serves it. */
  preferred: boolean;
}

interface ApiResource {
  name: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
}

interface ApiGroup {
  name: string;
  versions: { groupVersion: string; version: string }[];
  preferredVersion?: { version: string };
}

export interface DiscoveryOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Only these groups are read (discovery of every group costs a call each); default all. */
  wantGroup?: (group: string) => boolean;
}

function resourcesOf(group: string, version: string, preferred: boolean, list: { resources?: ApiResource[] }): DiscoveredResource[] {
  const prefix = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  return (list.resources ?? [])
    .filter((r) => !r.name.includes('/') && (r.verbs ?? []).includes('list'))
    .map((r) => ({
      group,
      version,
      resource: r.name,
      namespaced: r.namespaced,
      preferred,
      path: `${prefix}/${r.name}`,
      apiVersion: group === '' ? version : `${group}/${version}`,
      kind: r.kind,
    }));
}

/**
 * Every listable resource the cluster serves, from legacy discovery (kubectl's: /api, /apis, then
 * each group version's resource list), subresources left out.
 */
export async function discoverResources(kubeConfig: KubeConfig, options: DiscoveryOptions): Promise<DiscoveredResource[]> {
  const get = <T>(path: string) => getJson<T>(kubeConfig, path, options.timeoutMs, options.signal);
  const wanted = options.wantGroup ?? (() => true);
  const [core, groups] = await Promise.all([get<{ versions?: string[] }>('/api'), get<{ groups?: ApiGroup[] }>('/apis')]);
  const lists: Promise<DiscoveredResource[]>[] = [];
  if (wanted('')) {
    for (const version of core.versions ?? []) lists.push(get<{ resources?: ApiResource[] }>(`/api/${version}`).then((l) => resourcesOf('', version, true, l)));
  }
  for (const group of (groups.groups ?? []).filter((g) => wanted(g.name))) {
    for (const { version } of group.versions) {
      const preferred = group.preferredVersion?.version === version;
      lists.push(get<{ resources?: ApiResource[] }>(`/apis/${group.name}/${version}`).then((l) => resourcesOf(group.name, version, preferred, l)));
    }
  }
  return (await Promise.all(lists)).flat();
}
