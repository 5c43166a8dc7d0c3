import { execFile, type ExecFileException } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { isKubeObject, type KubeObject } from './kube-object.js';

export interface RenderOptions {
  /** kubectl binary; the machine's is /usr/bin/kubectl, found on PATH by default. */
  kubectlPath?: string;
  /** Deadline for the whole render; the kubectl process is killed when it passes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 20_000;

/**
 * Renders a kustomization directory with `kubectl kustomize` (offline) and parses the YAML
 * stream into objects. A missing kubectl is an error that says so, never an empty result.
 */
export async function renderKustomization(dir: string, options: RenderOptions = {}): Promise<KubeObject[]> {
  const yamlText = await runKubectlKustomize(dir, options);
  return parseObjects(yamlText, dir);
}

function runKubectlKustomize(dir: string, options: RenderOptions): Promise<string> {
  const kubectl = options.kubectlPath ?? 'kubectl';
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  return new Promise((resolve, reject) => {
    execFile(kubectl, ['kustomize', dir], { signal, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      reject(describeFailure(error, { kubectl, dir, timeoutMs, timedOut: deadline.aborted, stderr }));
    });
  });
}

interface FailureContext {
  kubectl: string;
  dir: string;
  timeoutMs: number;
  timedOut: boolean;
  stderr: string;
}

function describeFailure(error: ExecFileException, context: FailureContext): Error {
  if (error.code === 'ENOENT') {
    return new Error(
      `${context.kubectl} not found: rendering the manifests needs kubectl (with its built-in kustomize v5) on PATH; ` +
        'this machine image ships it at /usr/bin/kubectl',
    );
  }
  if (context.timedOut) {
    return new Error(`${context.kubectl} kustomize ${context.dir} did not finish within ${context.timeoutMs} ms (killed)`);
  }
  const detail = context.stderr.trim() || error.message;
  return new Error(`${context.kubectl} kustomize ${context.dir} failed: ${detail}`);
}

function parseObjects(yamlText: string, dir: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    if (document.errors.length > 0) throw new Error(`rendered YAML of ${dir} does not parse: ${document.errors[0]!.message}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (!isKubeObject(value)) throw new Error(`rendered document of ${dir} is not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`);
    objects.push(value);
  }
  return objects;
}
