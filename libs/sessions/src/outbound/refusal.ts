/**
 * How a message WhatsApp refused (an error ack: `<ack class="message" error="463">`) is described in
 * its record's `error`. One wording whichever path records it first (the send waiting for its ack, or
 * the inbound handler seeing Baileys' status update), so the gateway reads the same `provider_code`.
 */
export function refusalText(code: string): string {
  return `WhatsApp refused the message (error ${code}${code === '463' ? ': account restricted or missing privacy token' : ''})`;
}
