/**
 * `docker run` arguments that run a Deployment's server container the way the kubelet would:
 * its user and group, read-only root file system, dropped capabilities, no privilege escalation,
 * its emptyDir volumes as tmpfs, its ConfigMap volumes as read-only files, its environment with
 * the downward-API fields filled in. Anything in the pod spec this cannot reproduce is an error,
 * so the test never runs the image more leniently than the manifests say without noticing.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';
import { podSpecOf, type Container, type PodSpec } from '../manifests/workload.js';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';

export interface PodRunOptions {
  containerName: string;
  namespace: string;
  podName: string;
  /** The rendered objects, for the ConfigMaps the volumes name. */
  objects: readonly KubeObject[];
  /** Where ConfigMap volume contents are written for bind mounts. */
  scratchDir: string;
  /** Variables to set on top of the container's (the listening ports, on the host network). */
  envOverrides?: Record<string, string>;
}

export async function dockerRunArgs(deployment: IDeployment, options: PodRunOptions): Promise<string[]> {
  const spec = podSpecOf(deployment);
  const container = spec.containers.find((c) => c.name === options.containerName);
  if (!container) throw new Error(`no container ${options.containerName} in the Deployment`);
  return [...securityArgs(spec, container), ...(await volumeArgs(spec, container, options)), ...envArgs(container, options), container.image ?? ''];
}

function securityArgs(spec: PodSpec, container: Container): string[] {
  const sc = container.securityContext ?? {};
  const uid = sc.runAsUser ?? spec.securityContext?.runAsUser;
  const gid = sc.runAsGroup ?? spec.securityContext?.runAsGroup;
  if (uid === undefined || gid === undefined) throw new Error('the pod spec names no runAsUser/runAsGroup: the image would run as whatever its USER says');
  const args = ['--user', `${uid}:${gid}`];
  if (spec.securityContext?.fsGroup !== undefined) args.push('--group-add', String(spec.securityContext.fsGroup));
  if (sc.readOnlyRootFilesystem) args.push('--read-only');
  for (const capability of sc.capabilities?.drop ?? []) args.push('--cap-drop', capability);
  for (const capability of sc.capabilities?.add ?? []) args.push('--cap-add', capability);
  if (sc.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  if (sc.privileged) throw new Error('a privileged container: refusing to run it');
  // seccomp RuntimeDefault is what docker applies unless told otherwise.
  const seccomp = sc.seccompProfile?.type ?? spec.securityContext?.seccompProfile?.type;
  if (seccomp !== undefined && seccomp !== 'RuntimeDefault') throw new Error(`seccomp profile ${seccomp} is not reproduced here`);
  return args;
}

async function volumeArgs(spec: PodSpec, container: Container, options: PodRunOptions): Promise<string[]> {
  const args: string[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const volume = spec.volumes?.find((v) => v.name === mount.name);
    if (volume?.emptyDir) {
      const size = volume.emptyDir.sizeLimit ? `,size=${String(volume.emptyDir.sizeLimit).replace(/i$/, '').toLowerCase()}` : '';
      args.push('--tmpfs', `${mount.mountPath}:rw,nosuid,nodev,mode=1777${size}`);
    } else if (volume?.configMap?.name) {
      const dir = join(options.scratchDir, `configmap-${mount.name}`);
      await writeConfigMap(options.objects, volume.configMap.name, dir);
      args.push('--mount', `type=bind,source=${dir},target=${mount.mountPath},readonly`);
    } else {
      throw new Error(`volume ${mount.name} at ${mount.mountPath} is of a kind this runner does not reproduce`);
    }
  }
  return args;
}

async function writeConfigMap(objects: readonly KubeObject[], name: string, dir: string): Promise<void> {
  const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
  if (!configMap) throw new Error(`the ConfigMap ${name} a volume names is not in the rendered objects`);
  await mkdir(dir, { recursive: true });
  // The kubelet's files are readable by the pod's user; so are these (the dir is the mount point).
  await chmod(dir, 0o755);
  for (const [file, text] of Object.entries((configMap['data'] as Record<string, string> | undefined) ?? {})) {
    await writeFile(join(dir, file), text, { mode: 0o644 });
  }
}

function envArgs(container: Container, options: PodRunOptions): string[] {
  const fields: Record<string, string> = { 'metadata.namespace': options.namespace, 'metadata.name': options.podName };
  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef && fields[variable.valueFrom.fieldRef.fieldPath] !== undefined) env[variable.name] = fields[variable.valueFrom.fieldRef.fieldPath]!;
    else throw new Error(`env ${variable.name}: a source this runner does not reproduce`);
  }
  Object.assign(env, options.envOverrides);
  return Object.entries(env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
}
