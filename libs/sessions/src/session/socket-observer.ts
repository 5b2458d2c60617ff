import type { Lease } from '@gw/persistence';
import type { Logger } from '@gw/platform';
import type { WASocket } from '../baileys';

export interface SocketContext {
  instanceId: string;
  lease: Lease;
  socket: WASocket;
  logger: Logger;
  /**
   * The instance's own picture URL as stored, shared by the session's sockets: what the session read with
   * its row (again at each re-read) and what its inbound side last wrote. A login whose picture is the same
   * writes nothing (issue #38).
   */
  ownPicture?: { url: string };
}

/**
 * Extension point for code that maps Baileys events to records (messages, chats, contacts…): called
 * for every socket a session creates. Return a function to detach; it runs when the socket is
 * replaced or closed. Observers handle their own errors; a throw is logged and ignored.
 */
export interface SocketObserver {
  attach(context: SocketContext): (() => void) | void;
}
