// Public entry of @gw/wa-sim: a protocol-level WhatsApp server simulator for real Baileys clients.
import { ControlApi } from './control-api';
import { WaSimulator } from './simulator';
import type { SimulatorOptions } from './simulator-api-types';
import { quietLibsignalConsole } from './quiet-libsignal';

export { WaSimulator } from './simulator';
export type { AccountInfo, DeviceInfo, InboxQuery, MediaKind, SendMediaInput, SendOptions, SimulatorOptions } from './simulator-api-types';
export { MEDIA_TLS_CERT } from './media-cert';
export type { DeviceDeclaration, InboxEntry, LoginDeclaration, OutboxEntry, ReceiptType } from './accounts';
export type { ActiveFault, FaultAction, FaultRequest, FaultRule } from './faults';
export type { PostedStatus } from './status-broadcasts';
export type { PeerRequestRecord } from './phone-peer-data';
export { SimError } from './errors';
export { readStateFile, STATE_FILE_NAME } from './state-store';
export type { SimState } from './state-store';
export { decodeQrImage, parseQrString } from './pairing';
export { quietLibsignalConsole } from './quiet-libsignal';

export interface StartSimulatorOptions extends SimulatorOptions {
  wsPort?: number;
  /** 0 = any free port; false = no HTTP control API. */
  controlPort?: number | false;
  host?: string;
}

export interface RunningSimulator {
  /** ws://host:port/ws/chat; give it to Baileys as `waWebSocketUrl`. */
  websocketUrl: string;
  /** http://host:port, or '' when the control API is disabled. */
  controlUrl: string;
  /** Base64 of the 32-byte root public key; set `WA_CERT_DETAILS.PUBLIC_KEY` to its bytes. */
  rootPublicKey: string;
  /** host:port of the HTTPS media server (self-signed; trust MEDIA_TLS_CERT or skip verification). */
  mediaHost?: string;
  /** The in-process API (same operations as the control routes). */
  sim: WaSimulator;
  stop(): Promise<void>;
}

export async function startSimulator(options: StartSimulatorOptions = {}): Promise<RunningSimulator> {
  // The phones' libsignal prints whole session records when sessions rotate: off stdout wherever the
  // simulator runs (a bench's child process has no session worker to install the gateway's filter).
  quietLibsignalConsole();
  const host = options.host ?? '127.0.0.1';
  const sim = new WaSimulator({ ...options, host });
  try {
    await sim.listen();
  } catch (err) {
    await sim.stop().catch(() => undefined);
    throw err;
  }
  let control: ControlApi | undefined;
  let controlUrl = '';
  if (options.controlPort !== false) {
    control = new ControlApi(sim);
    try {
      controlUrl = await control.listen(options.controlPort ?? 0, host);
    } catch (err) {
      await sim.stop();
      throw err;
    }
  }
  return {
    websocketUrl: sim.websocketUrl,
    controlUrl,
    rootPublicKey: sim.rootPublicKey,
    mediaHost: sim.media?.hostname,
    sim,
    async stop() {
      await control?.close();
      await sim.stop();
    },
  };
}
