import type { Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { WASocket } from '../baileys';

export interface SocketContext {
  instanceId: string;
  lease: Lease;
  socket: WASocket;
  logger: Logger;
}

/**
 * Extension point for code that maps Baileys events to records (messages, chats, contacts…): called
 * for every socket a session creates. Return a function to detach; it runs when the socket is
 * replaced or closed. Observers handle their own errors; a throw is logged and ignored.
 */
export interface SocketObserver {
  attach(context: SocketContext): (() => void) | void;
}
