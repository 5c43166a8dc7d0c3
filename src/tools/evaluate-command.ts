import type { ToolOptions } from '../config/tool-args.js';
import type { Config } from '../config/types.js';
import type { Webhook } from '../admission/types.js';
import { givenAnswers } from './authorizer-answers.js';
import { evaluateEach, type EvaluateOptions } from './evaluation.js';
import { EvaluateReport } from './evaluate-report.js';
import { loadHandlerModules } from './handler-modules.js';
import { ManifestError, readManifests, type Manifest } from './manifests.js';
import { count, Progress } from './progress.js';
import { userInfoOf, type RequestShape } from '../kube/evaluation/request-shape.js';
import { loadToolPolicy, toolPolicyOptions, TOOL_BAD_INPUT, TOOL_FINDINGS, TOOL_OK, ToolInputError, type ToolIo } from './tool-io.js';

/** The request shape evaluate's flags ask for. */
export function requestShapeOf(tool: ToolOptions): RequestShape {
  return {
    ...(tool.operation ? { operation: tool.operation } : {}),
    dryRun: tool.dryRun,
    userInfo: userInfoOf(tool.user, tool.groups),
    ...(tool.subResource ? { subResource: tool.subResource } : {}),
  };
}

/** What `evaluate` does with the manifests once read: each through the webhooks, straight into its report. */
export async function evaluationReport(webhooks: readonly Webhook[], manifests: readonly Manifest[], options: EvaluateOptions, format: 'text' | 'json', verbose: boolean): Promise<EvaluateReport> {
  const report = new EvaluateReport(format, verbose);
  await evaluateEach(webhooks, manifests, options, (result) => report.add(result));
  return report;
}

/**
 * `kube-admission-server evaluate`: the manifests through the policy (and custom webhooks) as
 * kube-apiserver would take them; exit 0 when nothing would be denied, 1 when something would,
 * 2 for bad input.
 */
export async function runEvaluate(config: Config, tool: ToolOptions, io: ToolIo, customWebhooks: readonly Webhook[] = []): Promise<number> {
  try {
    const answers = await givenAnswers(tool);
    const { webhooks, excludedNamespaces } = await loadToolPolicy(config.policyFile, toolPolicyOptions(config, answers));
    const handlers = await loadHandlerModules(tool.handlers);
    const manifests = await readManifests(tool.files, io.stdin);
    const oldObjects = (await readManifests(tool.oldFiles, io.stdin)).map((m) => m.object);
    const progress = new Progress(io.stderr, 'evaluate');
    const report = await evaluationReport([...webhooks, ...customWebhooks, ...handlers], manifests, {
      onProgress: (done, total) => progress.update(() => `${count(done)} of ${count(total)} objects`),
      excludedNamespaces,
      defaultNamespace: tool.defaultNamespace,
      oldObjects,
      authorize: answers.authorize,
      shape: requestShapeOf(tool),
    }, tool.output === 'json' ? 'json' : 'text', tool.verbose);
    answers.requireAllAnswered();
    progress.done(() => `${count(report.objects)} objects`);
    io.stdout(report.toString());
    return report.allowed ? TOOL_OK : TOOL_FINDINGS;
  } catch (error) {
    if (error instanceof ToolInputError || error instanceof ManifestError) {
      io.stderr(`kube-admission-server evaluate: ${error.message}\n`);
      return TOOL_BAD_INPUT;
    }
    throw error;
  }
}
