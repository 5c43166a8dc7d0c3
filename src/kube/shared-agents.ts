import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { KubeConfig, type RequestContext } from '@kubernetes/client-node';

/**
 * How long a connection may sit idle in the pool. Below kube-apiserver's own idle timeout (Go's
 * `IdleTimeout`, 90 s) so the client, not the server, closes an idle connection: a request sent
 * on a connection the server is closing at that moment fails. A server that announces a shorter
 * one (`Keep-Alive: timeout=N`, as Node servers do) is honoured by Node's agent.
 */
export const IDLE_CONNECTION_MS = 30_000;

/**
 * The TLS settings client-node copies from the kubeconfig onto the agent it builds for a call
 * (`applySecurityAuthentication`, `applyToHTTPSOptions`): two calls may share a connection only
 * when these agree.
 */
const TLS_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'honorCipherOrder',
  'ecdhCurve',
  'clientCertEngine',
  'crl',
  'dhparam',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
] as const;

type TlsOptions = Pick<https.AgentOptions, (typeof TLS_OPTIONS)[number]>;

/**
 * A KubeConfig whose API calls, watches and raw requests share keep-alive agents, one per
 * distinct TLS configuration, instead of client-node 1.4's new agent (new SecureContext, new TLS
 * handshake, new connection) per call. That is what client-go does (one kept-alive connection per
 * kube-apiserver address): it saves the handshake on every call (about a tenth of a start, and
 * every lease renewal) and saves kube-apiserver a handshake per call too.
 *
 * client-node still builds its agent per call (it reads the token, a rotated CA file or client
 * certificate, and the auth providers' headers each time, which stays as it is); this class then
 * swaps in the shared agent with the same TLS settings. A rotated CA or certificate has other
 * settings, so it gets an agent of its own. A proxy agent (a `proxy-url` in the kubeconfig) is
 * left as client-node built it: per call, as before.
 *
 * Kept-alive connections that sit idle are unref'd by Node's agent (they never keep the process
 * alive); `close()` destroys them at shutdown so none stays open towards kube-apiserver.
 */
export class SharedAgentKubeConfig extends KubeConfig {
  readonly #agents = new Map<string, http.Agent>();
  #closed = false;

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const built = context.getAgent();
    if (built) context.setAgent(this.#shared(built));
  }

  override async applyToHTTPSOptions(opts: Parameters<KubeConfig['applyToHTTPSOptions']>[0]): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const built = (opts as https.RequestOptions).agent;
    if (built instanceof http.Agent) (opts as https.RequestOptions).agent = this.#shared(built);
  }

  /** The shared agents (one per TLS configuration met so far). */
  get agentCount(): number {
    return this.#agents.size;
  }

  /** Kept-alive connections idle in the pools now. */
  get idleConnections(): number {
    let idle = 0;
    for (const agent of this.#agents.values()) for (const sockets of Object.values(agent.freeSockets)) idle += sockets?.length ?? 0;
    return idle;
  }

  /**
   * Destroys every shared agent and its connections (a call still running fails, as at any
   * shutdown); calls after this build per-call agents again, so a late call still works.
   */
  close(): void {
    this.#closed = true;
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }

  #shared(built: http.Agent): http.Agent {
    // Only the two agent classes client-node builds without a proxy; a proxy agent keeps its own.
    const secure = built.constructor === https.Agent;
    if (this.#closed || (!secure && built.constructor !== http.Agent)) return built;
    const tls: TlsOptions = secure ? pick((built as https.Agent).options as TlsOptions) : {};
    const key = `${secure ? 'https' : 'http'}:${fingerprint(tls)}`;
    let agent = this.#agents.get(key);
    if (!agent) {
      const options = { ...tls, keepAlive: true, timeout: IDLE_CONNECTION_MS };
      agent = secure ? new https.Agent(options) : new http.Agent(options);
      this.#agents.set(key, agent);
    }
    return agent;
  }
}

function pick(options: TlsOptions): TlsOptions {
  const picked: Record<string, unknown> = {};
  for (const name of TLS_OPTIONS) if (options[name] !== undefined && options[name] !== null) picked[name] = options[name];
  return picked as TlsOptions;
}

/** A digest of the settings (a CA or key is kilobytes; the map keeps 64 hex characters). */
function fingerprint(options: TlsOptions): string {
  const hash = createHash('sha256');
  for (const name of TLS_OPTIONS) {
    const value: unknown = options[name];
    if (value === undefined) continue;
    hash.update(name).update('\0');
    hash.update(Buffer.isBuffer(value) ? value : JSON.stringify(value)).update('\0');
  }
  return hash.digest('hex');
}
