import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { KubeApi } from '../kube/client.js';
import type { LiveConfigurations } from './live-configurations.js';
import type { RouteTarget } from './routed-paths.js';
import type { RoutedPaths } from './routed-paths.js';

export interface LiveView {
  live: LiveConfigurations;
  /** The paths of this install's Service that the live configurations route to. */
  routedPaths: RoutedPaths;
  /** Settles once the view has stopped after `signal` aborted. */
  stopped: Promise<void>;
}

/**
 * Every replica's view of the live configurations (loaded only with a cluster, where this process
 * registers: @kubernetes/client-node takes about half a second to load).
 */
export async function startLiveView(config: Config, api: KubeApi, logger: Logger, signal: AbortSignal, urlBase: () => string | undefined = () => undefined): Promise<LiveView> {
  const [{ configurationApis }, { LiveConfigurations }, { routedPathsOf }] = await Promise.all([
    import('./configuration-api.js'),
    import('./live-configurations.js'),
    import('./routed-paths.js'),
  ]);
  const live = new LiveConfigurations({
    apis: configurationApis(api),
    kubeConfig: api.kubeConfig,
    configName: config.configName,
    resyncPeriodMs: config.resyncPeriodMs,
    logger: logger.child({ component: 'live-configurations' }),
  });
  const service = { name: config.serviceName, namespace: config.namespace };
  // The dev loop's URL is known once it listens, before anything asks for the routes.
  const target = (): RouteTarget => {
    const base = urlBase();
    return base === undefined ? { service } : { urlBase: base };
  };
  const routedPaths: RoutedPaths = {
    current: () => (live.snapshot ? routedPathsOf([live.snapshot.mutating, live.snapshot.validating], target()) : undefined),
    subscribe: (listener) => {
      live.on('change', listener);
      return () => live.off('change', listener);
    },
  };
  return { live, routedPaths, stopped: live.run(signal) };
}
