import { spawnSync } from 'node:child_process';
import { ffmpegPath, toMp3, toOpusVoiceNote } from '../src/ffmpeg';

describe('ffmpeg', () => {
  let wav: Buffer;

  beforeAll(() => {
    // One second of a 440 Hz tone, made by ffmpeg itself.
    wav = spawnSync(ffmpegPath(), ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-f', 'wav', 'pipe:1'], {
      maxBuffer: 10_000_000,
    }).stdout;
  });

  it('should turn audio into an Ogg Opus voice note', async () => {
    const ogg = await toOpusVoiceNote(wav);
    expect(ogg.subarray(0, 4).toString()).toBe('OggS');
    expect(ogg.includes(Buffer.from('OpusHead'))).toBe(true);
  });

  it('should turn audio into MP3', async () => {
    const mp3 = await toMp3(wav);
    expect(mp3.subarray(0, 3).toString() === 'ID3' || (mp3[0] === 0xff && (mp3[1] & 0xe0) === 0xe0)).toBe(true);
  });

  it('should reject what is not media', async () => {
    await expect(toMp3(Buffer.from('not audio at all'))).rejects.toThrow(/ffmpeg failed/);
  });
});
