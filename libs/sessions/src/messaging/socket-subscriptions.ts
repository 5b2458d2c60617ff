import type { BaileysEventMap, BinaryNode, WASocket } from '../baileys';

/**
 * The listeners an InboundSocketHandler puts on its socket (Baileys events and raw stanzas), each with
 * how it comes off again. Listeners of one event run in the order they were added.
 */
export class SocketSubscriptions {
  private readonly detachers: Array<() => void> = [];

  constructor(private readonly socket: WASocket) {}

  /** Listens to a Baileys event until detach(). */
  event<E extends keyof BaileysEventMap>(event: E, listener: (data: BaileysEventMap[E]) => void): void {
    this.socket.ev.on(event, listener);
    this.detachers.push(() => this.socket.ev.off(event, listener));
  }

  /** Listens to a Baileys event until `lateMs` after detach() (events Baileys emits after the socket went). */
  eventUntilLate<E extends keyof BaileysEventMap>(event: E, listener: (data: BaileysEventMap[E]) => void, lateMs: number): void {
    this.socket.ev.on(event, listener);
    this.detachers.push(() => setTimeout(() => this.socket.ev.off(event, listener), lateMs).unref());
  }

  /** Listens to raw stanzas of the websocket (`CB:…`) until detach(). */
  stanza(tag: string, listener: (node: BinaryNode) => void): void {
    this.socket.ws.on(tag, listener);
    this.detachers.push(() => this.socket.ws.off(tag, listener));
  }

  /** Takes every listener off (in the order they were added). */
  detach(): void {
    for (const detach of this.detachers.splice(0)) detach();
  }
}
