import { createLogger } from '@gw/platform';
import type { WASocket } from '../baileys';
import { SocketSlot } from './socket-slot';

describe(SocketSlot.name, () => {
  const logger = createLogger('test', 'silent');

  function fakeSocket(state: { isClosed?: boolean; isClosing?: boolean } = {}) {
    const end = jest.fn().mockResolvedValue(undefined);
    const terminate = jest.fn();
    const socket = { ws: { isClosed: false, isClosing: false, ...state, socket: { terminate } }, end } as unknown as WASocket;
    return { socket, end, terminate };
  }

  describe('numberNext', () => {
    it('should make the events of a detached or replaced socket not current', () => {
      const sut = new SocketSlot(logger);
      const first = sut.numberNext();
      expect(sut.isCurrent(first)).toBe(true);
      sut.detach();
      expect(sut.isCurrent(first)).toBe(false);
      const second = sut.numberNext();
      expect(sut.isCurrent(second)).toBe(true);
      sut.ignoreCurrentEvents();
      expect(sut.isCurrent(second)).toBe(false);
    });
  });

  describe('detach', () => {
    it('should forget and close the socket, give its handshake ticket back and run its observers once', () => {
      const sut = new SocketSlot(logger);
      const { socket, end, terminate } = fakeSocket();
      const release = jest.fn();
      const observer = jest.fn();
      sut.holdHandshake(release);
      sut.hold(socket);
      sut.onDetach(() => {
        throw new Error('observer broke');
      });
      sut.onDetach(observer);
      expect(sut.holdsHandshake(release)).toBe(true);
      sut.detach();
      sut.detach();
      expect(sut.socket).toBeNull();
      expect(release).toHaveBeenCalledTimes(1);
      expect(sut.holdsHandshake(release)).toBe(false);
      expect(observer).toHaveBeenCalledTimes(1);
      expect(end).toHaveBeenCalledTimes(1);
      expect(terminate).not.toHaveBeenCalled();
    });

    it('should drop the TCP connection on a hard detach', () => {
      const sut = new SocketSlot(logger);
      const { socket, terminate } = fakeSocket();
      sut.hold(socket);
      sut.detach(true);
      expect(terminate).toHaveBeenCalledTimes(1);
    });
  });

  describe('replacedOwnSocketWithin', () => {
    it('should answer true once after dropping a socket still open or logging in', () => {
      const sut = new SocketSlot(logger);
      expect(sut.replacedOwnSocketWithin(30_000)).toBe(false);
      sut.hold(fakeSocket().socket);
      sut.detach();
      expect(sut.replacedOwnSocketWithin(30_000)).toBe(true);
      expect(sut.replacedOwnSocketWithin(30_000)).toBe(false);
    });

    it('should answer false after dropping a socket that had closed already', () => {
      const sut = new SocketSlot(logger);
      sut.hold(fakeSocket({ isClosed: true }).socket);
      sut.detach();
      expect(sut.replacedOwnSocketWithin(30_000)).toBe(false);
    });
  });
});
