/** A message (a round's input record or a history row) that is a voice note (`ptt`) or an audio, else null. */
export function audioKind(message: { mediaType?: unknown; messageType?: unknown }): 'ptt' | 'audio' | null {
  if (message.mediaType === 'ptt') return 'ptt';
  if (message.mediaType === 'audio' || message.messageType === 'AudioMessage') return 'audio';
  return null;
}

/** How the model sees a voice note or an audio: its transcript, or a placeholder when there is none. */
export function describeAudio(kind: 'ptt' | 'audio', transcript: string | undefined): string {
  const tag = kind === 'ptt' ? '[voice note]' : '[audio]';
  return transcript ? `${tag} ${transcript}` : tag;
}
