// One client WebSocket: Noise handshake, encrypted framing and binary-node IO. Knows nothing
// about accounts; the simulator decides what a ClientPayload or a node means.
import type { WebSocket } from 'ws';
import { decodeBinaryNode, encodeBinaryNode } from './baileys';
import type { CertificateChain } from './certs';
import type { BinaryNode } from './node-io';
import { nodeToString } from './node-io';
import { encodeFrame, FrameReader, NoiseServerHandshake, TransportCipher } from './noise-server';
import type { ClientFinish } from './noise-server';
import type { Logger } from './logger';

export interface ConnectionHandler {
  onClientFinish(connection: Connection, finish: ClientFinish): Promise<void>;
  onNode(connection: Connection, node: BinaryNode): Promise<void>;
  onClose(connection: Connection): void;
  /** How long the server hello waits (the `slow-handshake` fault: a congested path or server); 0 = at once. */
  serverHelloDelayMs?(): number;
}

type Phase = 'hello' | 'finish' | 'transport' | 'closed';

interface PendingQuery {
  resolve: (node: BinaryNode) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

let connectionCounter = 0;
let serverTagCounter = 0;

/** Ids for server-initiated stanzas; distinct from the client's own tag scheme. */
export function nextServerId(): string {
  serverTagCounter = (serverTagCounter + 1) % 1_000_000_000;
  return `${Date.now().toString(16).toUpperCase()}.${serverTagCounter}`;
}

export class Connection {
  readonly id = ++connectionCounter;
  readonly openedAt = Date.now();
  /** Set once the client logged in as a linked device ("jid" of that device). */
  deviceJid?: string;
  /** Set while the client is an unregistered companion waiting to be paired. */
  registrationId?: string;
  /** Baileys logs in with passive=true and turns delivery on with `<passive><active/>`. */
  active = false;
  clientStatic?: Buffer;
  /** Extra latency applied to every outbound node (fault injection). */
  outboundDelayMs = 0;
  /** When true, keepalive pings are not answered (fault injection). */
  ignorePings = false;

  private phase: Phase = 'hello';
  private readonly reader = new FrameReader();
  private readonly handshake: NoiseServerHandshake;
  private transport?: TransportCipher;
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();
  private readonly pendingQueries = new Map<string, PendingQuery>();

  constructor(
    private readonly socket: WebSocket,
    certs: CertificateChain,
    private readonly handler: ConnectionHandler,
    private readonly logger: Logger,
  ) {
    this.handshake = new NoiseServerHandshake(certs);
    socket.binaryType = 'nodebuffer';
    socket.on('message', (data: Buffer) => this.onData(data));
    socket.on('close', () => this.onSocketClosed());
    socket.on('error', (err: Error) => {
      this.logger.debug({ err: err.message, conn: this.id }, 'socket error');
    });
  }

  get isOpen(): boolean {
    return this.phase !== 'closed' && this.socket.readyState === this.socket.OPEN;
  }

  get isTransportReady(): boolean {
    return this.phase === 'transport' && this.isOpen;
  }

  /** Sends a node; order is preserved even when a latency fault is active. */
  sendNode(node: BinaryNode): void {
    if (!this.transport || this.phase === 'closed') {
      return;
    }
    if (this.logger.isLevelEnabled('trace')) {
      this.logger.trace({ conn: this.id, xml: nodeToString(node) }, 'send');
    }
    if (this.outboundDelayMs > 0) {
      const delayMs = this.outboundDelayMs;
      this.outbound = this.outbound.then(() => new Promise<void>((resolve) => setTimeout(() => (this.writeNode(node), resolve()), delayMs)));
      return;
    }
    this.outbound = this.outbound.then(() => this.writeNode(node));
  }

  /** Sends a server-initiated iq and resolves with the client's reply. */
  query(node: BinaryNode, timeoutMs = 10_000): Promise<BinaryNode> {
    const id = node.attrs.id;
    return new Promise<BinaryNode>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pendingQueries.delete(id);
        reject(new Error(`query ${id} timed out`));
      }, timeoutMs);
      this.pendingQueries.set(id, { resolve, reject, timer });
      this.sendNode(node);
    });
  }

  /** Graceful close (flushes queued frames first). */
  close(): void {
    if (this.phase === 'closed') {
      return;
    }
    void this.outbound.then(() => {
      try {
        this.socket.close();
      } catch {
        // already gone
      }
    });
  }

  /** Abrupt drop, like a network cut: no close frame. */
  destroy(): void {
    try {
      this.socket.terminate();
    } catch {
      // already gone
    }
  }

  private writeNode(node: BinaryNode): void {
    if (!this.transport || !this.isOpen) {
      return;
    }
    const frame = encodeFrame(this.transport.encrypt(encodeBinaryNode(node)));
    this.socket.send(frame);
  }

  private onData(data: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.reader.push(data);
    } catch (err) {
      this.logger.debug({ err: (err as Error).message, conn: this.id }, 'bad frame');
      this.destroy();
      return;
    }
    for (const frame of frames) {
      this.inbound = this.inbound
        .then(() => this.onFrame(frame))
        .catch((err: unknown) => {
          this.logger.warn({ err: (err as Error).message, stack: (err as Error).stack, conn: this.id }, 'error handling frame');
        });
    }
  }

  private async onFrame(frame: Buffer): Promise<void> {
    switch (this.phase) {
      case 'hello': {
        const delayMs = this.handler.serverHelloDelayMs?.() ?? 0;
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (!this.isOpen) return;
        const serverHello = this.handshake.onClientHello(frame);
        this.phase = 'finish';
        // The handshake reply is framed but not encrypted and carries no intro header.
        this.socket.send(encodeFrame(serverHello));
        return;
      }
      case 'finish': {
        const finish = this.handshake.onClientFinish(frame);
        this.transport = finish.transport;
        this.clientStatic = finish.clientStatic;
        this.phase = 'transport';
        await this.handler.onClientFinish(this, finish);
        return;
      }
      case 'transport': {
        if (!this.transport) {
          return;
        }
        const node = await decodeBinaryNode(this.transport.decrypt(frame));
        if (this.logger.isLevelEnabled('trace')) {
          this.logger.trace({ conn: this.id, xml: nodeToString(node) }, 'recv');
        }
        const pending = node.tag === 'iq' && (node.attrs.type === 'result' || node.attrs.type === 'error') ? this.pendingQueries.get(node.attrs.id) : undefined;
        if (pending) {
          clearTimeout(pending.timer);
          this.pendingQueries.delete(node.attrs.id);
          pending.resolve(node);
          return;
        }
        await this.handler.onNode(this, node);
        return;
      }
      case 'closed':
        return;
    }
  }

  private onSocketClosed(): void {
    if (this.phase === 'closed') {
      return;
    }
    this.phase = 'closed';
    for (const [id, pending] of this.pendingQueries) {
      clearTimeout(pending.timer);
      pending.reject(new Error(`connection closed before reply to ${id}`));
    }
    this.pendingQueries.clear();
    this.handler.onClose(this);
  }
}
