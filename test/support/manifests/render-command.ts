/**
 * Runs a manifest renderer (`kubectl kustomize`, `helm template`) under a deadline and parses its
 * YAML stream into objects. A missing binary, a failure, a timeout or a document that is not a
 * Kubernetes object is an error that says so, never an empty result.
 */
import { execFile, type ExecFileException } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import { isKubeObject, type KubeObject } from '../../../local-cluster/util/kube-object.js';
import { deadlineSignal } from '../deadline.js';

export interface RenderOptions {
  /** Deadline for the whole render; the process is killed when it passes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RenderCommand {
  binary: string;
  args: string[];
  /** What is rendered, for messages: a directory or chart. */
  subject: string;
  /** What the binary is needed for, for the not-found message. */
  purpose: string;
}

const DEFAULT_TIMEOUT_MS = 20_000;

export async function renderObjects(command: RenderCommand, options: RenderOptions = {}): Promise<KubeObject[]> {
  return parseObjects(await runRenderer(command, options), command.subject);
}

function runRenderer(command: RenderCommand, options: RenderOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadline = deadlineSignal(timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  return new Promise((resolve, reject) => {
    execFile(command.binary, command.args, { signal, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      reject(describeFailure(error, command, { timeoutMs, timedOut: deadline.aborted, stderr }));
    });
  });
}

function describeFailure(error: ExecFileException, command: RenderCommand, context: { timeoutMs: number; timedOut: boolean; stderr: string }): Error {
  const name = `${command.binary} ${command.args[0] ?? ''}`.trim();
  if (error.code === 'ENOENT') return new Error(`${command.binary} not found: ${command.purpose}`);
  if (context.timedOut) return new Error(`${name} ${command.subject} did not finish within ${context.timeoutMs} ms (killed)`);
  const detail = context.stderr.trim() || error.message;
  return new Error(`${name} ${command.subject} failed: ${detail}`);
}

/**
 * Kubernetes reads manifests as YAML 1.1 (sigs.k8s.io/yaml), where `0440` is an octal number:
 * parse them the same way.
 */
function parseObjects(yamlText: string, subject: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const document of parseAllDocuments(yamlText, { version: '1.1' })) {
    if (document.errors.length > 0) throw new Error(`rendered YAML of ${subject} does not parse: ${document.errors[0]!.message}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (!isKubeObject(value)) throw new Error(`rendered document of ${subject} is not a Kubernetes object: ${JSON.stringify(value).slice(0, 200)}`);
    objects.push(value);
  }
  return objects;
}
