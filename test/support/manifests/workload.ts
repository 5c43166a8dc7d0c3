/** Typed views of the rendered workload objects, for reading fields by their exact names. */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IIoK8sApiCoreV1Container as Container } from 'kubernetes-models/v1/Container';
import type { IIoK8sApiCoreV1PodSpec as PodSpec } from 'kubernetes-models/v1/PodSpec';
import type { KubeObject } from '../../../local-cluster/util/kube-object.js';

export type { Container, PodSpec };

export function asDeployment(object: KubeObject): IDeployment {
  if (object.apiVersion !== 'apps/v1' || object.kind !== 'Deployment') throw new Error(`${object.kind} ${object.metadata.name} is not an apps/v1 Deployment`);
  return object as unknown as IDeployment;
}

export function podSpecOf(deployment: IDeployment): PodSpec {
  const spec = deployment.spec?.template.spec;
  if (!spec) throw new Error(`Deployment ${deployment.metadata?.name} has no pod template spec`);
  return spec;
}

export function allContainers(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}

/** The literal value of an env variable, undefined when unset or set from a source. */
export function envValue(container: Container, name: string): string | undefined {
  return container.env?.find((e) => e.name === name)?.value;
}

/** Go-style durations as the server accepts them ("3s", "1m30s", "250ms"), in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text.trim();
  while (rest !== '') {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!match) throw new Error(`not a duration: ${JSON.stringify(text)}`);
    total += Number(match[1]) * units[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total;
}
