import { spawn } from 'node:child_process';

const MAX_OUTPUT = 100 * 1024 * 1024;

/** The ffmpeg binary shipped in the `@ffmpeg-installer` registry package (FFMPEG_PATH overrides). */
export function ffmpegPath(): string {
  if (process.env.FFMPEG_PATH) return process.env.FFMPEG_PATH;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
}

/** Pipes bytes through ffmpeg (stdin → stdout) with the given output arguments. */
export function transcode(input: Buffer, outputArgs: string[], timeoutMs = 60_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...outputArgs, 'pipe:1'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT) child.kill('SIGKILL');
      else chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()).slice(-2000));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0 && size > 0) resolve(Buffer.concat(chunks));
      else reject(new Error(`ffmpeg failed (${code ?? 'killed'}): ${stderr.trim().slice(-300)}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** A WhatsApp voice note: Opus in Ogg, mono, 48 kHz. */
export function toOpusVoiceNote(input: Buffer): Promise<Buffer> {
  return transcode(input, ['-vn', '-ac', '1', '-ar', '48000', '-c:a', 'libopus', '-b:a', '32k', '-f', 'ogg']);
}

export function toMp3(input: Buffer): Promise<Buffer> {
  return transcode(input, ['-vn', '-c:a', 'libmp3lame', '-b:a', '128k', '-f', 'mp3']);
}
