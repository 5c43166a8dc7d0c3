import type { Config } from '../config/types.js';
import type { AuthorizationSource } from '../cel/authorization-answers.js';
import { loadPolicyFile } from '../policy/policy-file.js';
import type { Policy, PolicyOptions } from '../policy/policy.js';
import type { Webhook } from '../admission/types.js';
import { BadInputError as ToolInputError } from '../util/bad-input.js';

/** Where a tool writes and reads; tests pass their own. */
export interface ToolIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: NodeJS.ReadableStream;
}

export const processIo: ToolIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
};

/** The tools' exit codes: nothing denied / all tests pass, something denied / a test failed, bad input. */
export const TOOL_OK = 0;
export const TOOL_FINDINGS = 1;
export const TOOL_BAD_INPUT = 2;

/** Bad input the tool reports in one message and exits 2 on (the evaluation path below the tools throws it too). */
export { ToolInputError };

export interface LoadedToolPolicy {
  policy: Policy;
  webhooks: Webhook[];
  /** What registration leaves out: the server's own namespace and the policy's excludedNamespaces. */
  excludedNamespaces: string[];
}

/** The policy as the installed server would load it (its namespace, the target kube-apiserver). */
export async function loadToolPolicy(path: string, options: PolicyOptions & { ownNamespace: string }): Promise<LoadedToolPolicy> {
  const { ownNamespace } = options;
  const result = await loadPolicyFile(path, options);
  if (!result.ok) throw new ToolInputError(`invalid policy file:\n${result.errors.join('\n')}`);
  return { policy: result.policy, webhooks: result.webhooks, excludedNamespaces: [...new Set([ownNamespace, ...result.policy.excludedNamespaces])] };
}

/** What the tools load a policy with: the install's namespace, the --kubernetes-version given, and the answers to authorizer checks. */
export function toolPolicyOptions(config: Pick<Config, 'namespace' | 'kubernetesVersion'>, authorization?: AuthorizationSource): PolicyOptions & { ownNamespace: string } {
  return { ownNamespace: config.namespace, ...(config.kubernetesVersion ? { kubernetesVersion: config.kubernetesVersion } : {}), ...(authorization ? { authorization } : {}) };
}
