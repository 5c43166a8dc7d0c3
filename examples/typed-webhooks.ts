/**
 * Typed handlers: `kind` gives `request.object` the Kubernetes type of the kind (a typo in a field
 * name is a compile error) and the rules follow from the kind. The mutation helpers edit every
 * container of any workload; the server turns the edit into the JSONPatch. docs/writing-webhooks.md
 * walks through it; test/package-typed-handlers.test.ts compiles this file against the packed
 * package in a strict project and serves it.
 *
 *   npx tsc && node typed-server.js --port 8443
 */
import { defineMutatingWebhook, defineValidatingWebhook, setEnvVar, setLabel, workloadContainers, type Webhook } from 'kube-admission-server';

/** Pods may not run images tagged `:latest` (nor untagged ones, which mean the same). */
export const noLatestTag = defineValidatingWebhook({
  name: 'no-latest-tag',
  kind: 'Pod',
  handler: (request, context) => {
    const image = request.object?.spec?.containers?.[0]?.image;
    const unpinned = workloadContainers(request.object)
      .filter(({ container }) => container.image !== undefined && (container.image.endsWith(':latest') || !container.image.slice(container.image.lastIndexOf('/') + 1).includes(':')))
      .map(({ kind, name, container }) => `${kind} "${name}" uses ${container.image}`);
    if (unpinned.length === 0) return { allowed: true };
    // The server's logger (every line carries the review's uid and this webhook's name) and its
    // Prometheus registry (scraped on /metrics with the server's own metrics).
    context.log.info({ unpinned: unpinned.length }, 'unpinned images');
    context.metrics.counter({ name: 'example_unpinned_images_total', help: 'Pods refused for unpinned images.', labelNames: ['namespace'] }).inc({ namespace: request.namespace ?? '' });
    return { allowed: false, message: `pin your images (first container: ${image}): ${unpinned.join('; ')}` };
  },
});

/** Every workload's pods get the team label and TZ=UTC in each of their containers. */
export const workloadDefaults = defineMutatingWebhook({
  name: 'workload-defaults',
  kind: ['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob'],
  handler: (request) => {
    const object = request.object;
    if (!object) return { allowed: true };
    setLabel(object, 'example.com/defaulted', 'true');
    setEnvVar(object, { name: 'TZ', value: 'UTC' });
    return { allowed: true, object };
  },
});

/** What the program serves (and what `evaluate --handlers` and `test --handlers` load). */
export const webhooks: Webhook[] = [noLatestTag, workloadDefaults];
