/**
 * kube-apiserver's pool of webhook connections, as Go's http.Transport keeps it (client-go's
 * transport cache, defaults from apimachinery's SetOldTransportDefaults): keep-alive, up to 25
 * idle connections per host, the most recently used one reused first, and an idle connection
 * closed by the client after 90 s (`http.DefaultTransport.IdleConnTimeout`) whatever the server
 * announced. node's agent differs on that last point: it honours a `Keep-Alive: timeout=N` answer
 * header by closing one second earlier, which would hide a server that closes idle connections
 * before kube-apiserver does (Go reuses such a connection and the call fails with EOF).
 */
import { Agent, type AgentOptions } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** Go's http.DefaultTransport.IdleConnTimeout, which kube-apiserver's webhook transport inherits. */
export const GO_IDLE_CONN_TIMEOUT_MS = 90_000;
/** net.Dialer's KeepAlive in Go's default transport: TCP keep-alive probes after 30 s. */
const TCP_KEEP_ALIVE_MS = 30_000;

export class GoTransportAgent extends Agent {
  constructor(options: AgentOptions = {}) {
    super({ keepAlive: true, maxFreeSockets: 25, scheduling: 'lifo', timeout: GO_IDLE_CONN_TIMEOUT_MS, ...options });
  }

  /** Back to the pool with Go's idle timeout, not node's reading of the server's hint. */
  override keepSocketAlive(socket: Duplex): boolean {
    const tcp = socket as Socket;
    tcp.setKeepAlive(true, TCP_KEEP_ALIVE_MS);
    tcp.unref();
    tcp.setTimeout(GO_IDLE_CONN_TIMEOUT_MS);
    return true;
  }
}
