/**
 * Custom admission handlers in TypeScript, next to (or instead of) the policy file's built-in
 * rules. A handler gets the AdmissionRequest and a context (abort signal, dryRun, the webhook's
 * spec) and answers with a decision; a mutating handler answers with the object it wants and the
 * server computes the JSON patch. docs/policy.md ("Custom handlers") explains the API, and
 * examples/server.ts serves these handlers.
 *
 * It imports the package by name, as a project that installed it does (`npm install
 * kube-admission-server`); test/package-npm.test.ts type-checks and runs it against the packed
 * tarball.
 */
import {
  applyMode,
  containersOf,
  defineMutatingWebhook,
  defineValidatingWebhook,
  describeContainer,
  podSpecsOf,
  type KubeObject,
  type MutatingWebhook,
  type RuleMode,
  type ValidatingWebhook,
} from 'kube-admission-server';

/** Images must be pinned: a tag like `:latest` (or none) can change under a running workload. */
export function unpinnedImages(object: KubeObject): string[] {
  const findings: string[] = [];
  for (const location of podSpecsOf(object)) {
    for (const ref of containersOf(location.spec)) {
      const image = typeof ref.container['image'] === 'string' ? ref.container['image'] : '';
      const lastSegment = image.slice(image.lastIndexOf('/') + 1);
      const tag = lastSegment.includes(':') ? lastSegment.slice(lastSegment.indexOf(':') + 1) : '';
      if (!image.includes('@sha256:') && (tag === '' || tag === 'latest')) {
        findings.push(`${describeContainer(ref, location)} image "${image}" is not pinned; use a version tag or a digest`);
      }
    }
  }
  return findings;
}

/** A validating webhook with the same enforce/warn/audit modes as the built-in rules. */
export function requirePinnedImages(mode: RuleMode = 'enforce'): ValidatingWebhook {
  return defineValidatingWebhook({
    name: 'require-pinned-images',
    rules: [
      { operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] },
      { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'statefulsets', 'daemonsets'] },
    ],
    // Only namespaces that opted in; rolled out to more by labelling them.
    namespaceSelector: { matchLabels: { 'example.com/pinned-images': 'required' } },
    handler: (request) => {
      if (request.object === null) return { allowed: true }; // DELETE: nothing to check
      return applyMode(unpinnedImages(request.object), mode, { source: 'require-pinned-images' });
    },
  });
}

/**
 * A mutating webhook: records who created a Pod in an annotation. It returns the whole desired
 * object; returning an equal object (or none) means "no change", so reinvocation is harmless.
 */
export function annotateCreator(): MutatingWebhook {
  return defineMutatingWebhook({
    name: 'annotate-creator',
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    timeoutSeconds: 2,
    handler: (request, context) => {
      if (request.object === null || context.signal.aborted) return { allowed: true };
      const creator = request.userInfo.username ?? 'unknown';
      const annotations = request.object.metadata?.annotations ?? {};
      if (annotations['example.com/created-by'] === creator) return { allowed: true };
      // request.object is this review's own copy: edit it and return it; the server computes the patch.
      const object: KubeObject = request.object;
      object.metadata = { ...object.metadata, annotations: { ...annotations, 'example.com/created-by': creator } };
      return { allowed: true, object };
    },
  });
}

/** What a program hands to the server: the policy file's webhooks plus these. */
export const customWebhooks = (): (ValidatingWebhook | MutatingWebhook)[] => [requirePinnedImages('warn'), annotateCreator()];
