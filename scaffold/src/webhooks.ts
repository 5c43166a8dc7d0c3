/**
 * Your admission webhooks. Each is typed by its kind: `request.object` is the Kubernetes type of
 * that kind (a typo in a field does not compile) and the rules kube-apiserver calls it for follow
 * from the kind. The guide: docs/writing-webhooks.md of kube-admission-server.
 */
import { defineMutatingWebhook, defineValidatingWebhook, setEnvVar, setLabel, workloadContainers } from 'kube-admission-server';

/** An image tagged `latest`, or not tagged at all, can change under a running workload. */
function unpinned(image: string | undefined): boolean {
  if (image === undefined || image.includes('@sha256:')) return false;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  return !lastSegment.includes(':') || lastSegment.endsWith(':latest');
}

/** Validating: Pods must pin their images (also checked on `kubectl debug`, the ephemeral containers). */
export const pinnedImages = defineValidatingWebhook({
  name: 'pinned-images',
  kind: 'Pod',
  handler: (request) => {
    const offenders = workloadContainers(request.object).filter(({ container }) => unpinned(container.image));
    if (offenders.length === 0) return { allowed: true };
    return { allowed: false, message: `pin the image of ${offenders.map(({ name }) => name).join(', ')} to a version tag or a digest` };
  },
});

/** Mutating: workloads created get a label saying they were defaulted and TZ=UTC in every container. */
export const workloadDefaults = defineMutatingWebhook({
  name: 'workload-defaults',
  kind: ['Deployment', 'StatefulSet', 'DaemonSet'],
  handler: (request) => {
    const object = request.object;
    if (!object) return { allowed: true };
    setLabel(object, 'example.com/defaulted', 'true');
    setEnvVar(object, { name: 'TZ', value: 'UTC' });
    return { allowed: true, object };
  },
});

/** What the server serves, `render` renders and `test --handlers` loads. */
export const webhooks = [pinnedImages, workloadDefaults];
