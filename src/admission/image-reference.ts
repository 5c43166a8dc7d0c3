/**
 * Container image references as the runtime resolves them: `nginx` is
 * `docker.io/library/nginx`, `acme/app` is `docker.io/acme/app`, and a first segment with a "."
 * or ":" (or `localhost`) is a registry host.
 */

const DOCKER_HUB = 'docker.io';
const DOCKER_HUB_ALIASES = new Set(['index.docker.io', 'registry-1.docker.io', 'docker.io']);

function isRegistryHost(segment: string): boolean {
  return segment.includes('.') || segment.includes(':') || segment === 'localhost';
}

/** The fully qualified form of `image`: registry host, repository path, tag or digest. */
export function normalizeImage(image: string): string {
  const trimmed = image.trim();
  const slash = trimmed.indexOf('/');
  const first = slash === -1 ? '' : trimmed.slice(0, slash);
  if (slash !== -1 && isRegistryHost(first)) {
    const host = DOCKER_HUB_ALIASES.has(first.toLowerCase()) ? DOCKER_HUB : first.toLowerCase();
    const rest = trimmed.slice(slash + 1);
    return host === DOCKER_HUB && !rest.includes('/') ? `${host}/library/${rest}` : `${host}/${rest}`;
  }
  return slash === -1 ? `${DOCKER_HUB}/library/${trimmed}` : `${DOCKER_HUB}/${trimmed}`;
}

/** A registry prefix as the policy compares it: host lowercased, Docker Hub aliases folded, ending in "/". */
export function normalizeRegistryPrefix(prefix: string): string {
  const withSlash = prefix.endsWith('/') ? prefix : `${prefix}/`;
  const slash = withSlash.indexOf('/');
  const host = withSlash.slice(0, slash).toLowerCase();
  return `${DOCKER_HUB_ALIASES.has(host) ? DOCKER_HUB : host}${withSlash.slice(slash)}`;
}

/** Why `prefix` cannot be a registry prefix, or undefined when it can. */
export function registryPrefixProblem(prefix: string): string | undefined {
  const host = prefix.split('/')[0] ?? '';
  if (prefix.trim() !== prefix || prefix.includes(' ')) return `"${prefix}" must not contain spaces`;
  if (!isRegistryHost(host)) {
    return `"${prefix}" must start with a registry host (a name with "." or ":", or localhost), e.g. docker.io/library/ or ghcr.io/acme/`;
  }
  if (/[@]/.test(prefix) || prefix.includes('//')) return `"${prefix}" must be a registry host and optional repository path, without tag or digest`;
  return undefined;
}

/** True when `image` comes from `prefix` (a normalized prefix ending in "/"). */
export function imageFromPrefix(image: string, normalizedPrefix: string): boolean {
  return normalizeImage(image).startsWith(normalizedPrefix);
}
