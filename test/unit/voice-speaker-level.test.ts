import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { SILENCE_DBFS } from '../../actors/voice/level.ts';
import { DEFAULT_SEGMENTER } from '../../actors/voice/segmenter.ts';
import { DEFAULT_SPEAKER_LEVEL, SpeakerLevel, voiceLevelDbfs } from '../../actors/voice/speaker-level.ts';
import { VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { jfkPcm, pcmToFloat, SAMPLE_RATE, toPcm, wavPcm } from '../../ops/support/voice-media.ts';

/** The LibriVox reader's five sentences of the test media, end to end: the room's voices. */
async function readerSentences(): Promise<Float32Array> {
  const names = ['0870', '0880', '0890', '0920', '0930'].map((n) => `sense_and_sensibility_01_austen_64kb-${n}.wav`);
  const parts = await Promise.all(names.map(async (name) => pcmToFloat(wavPcm(await readFile(join(readOpsConfig().mediaDir, 'speech', name))))));
  const all = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  parts.reduce((at, part) => (all.set(part, at), at + part.length), 0);
  return all;
}

test('voice level: the loudest tenth of the frames, so pauses and padding do not lower it', () => {
  // A 1 kHz tone at amplitude 0.1 (RMS -23 dBFS) for a third of the samples, silence for the rest.
  const samples = new Float32Array(SAMPLE_RATE);
  for (let i = 0; i < samples.length / 3; i++) samples[i] = 0.1 * Math.sin((2 * Math.PI * 1000 * i) / SAMPLE_RATE);
  assert.ok(Math.abs(voiceLevelDbfs(samples) - 20 * Math.log10(0.1 / Math.SQRT2)) < 0.1, `${voiceLevelDbfs(samples)} dBFS`);
  assert.is(voiceLevelDbfs(new Float32Array(SAMPLE_RATE)), SILENCE_DBFS, 'digital silence');
});

test('speaker level: while the background talks, a segment 8 dB or more under the loudest of the last minute is not the speaker', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.ok(speaker.keeps(-30, 5, true), 'nothing heard yet: the first segment is kept, whatever its level');
  assert.ok(speaker.keeps(-16, 10, true));
  assert.ok(speaker.keeps(-23.9, 15, true), 'a softer sentence of the speaker, 7.9 dB under');
  assert.not.ok(speaker.keeps(-24.1, 20, true), 'the room, 8.1 dB under');
  assert.not.ok(speaker.keeps(-26, 25, true));
  assert.ok(speaker.keeps(-26, 26, false), 'a quiet room: a soft voice is still written down');
});

test('speaker level: a segment left out does not lower the speaker, and a minute without one forgets it', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.ok(speaker.keeps(-16, 0, true));
  for (let at = 5; at < 60; at += 5) assert.not.ok(speaker.keeps(-26, at, true), `the room at ${at} s`);
  assert.ok(speaker.keeps(-26, 61, true), 'a minute after the speaker, the next voice is heard');
  assert.ok(speaker.keeps(-27, 62, true));
});

test('speaker level, with the VAD: the room talking on while the speaker is silent is not transcribed', async () => {
  const model = await VoiceActivityModel.load(readConfig().modelsDir);
  const jfk = pcmToFloat(await jfkPcm());
  const reader = await readerSentences();
  const seconds = (s: number) => Math.round(s * SAMPLE_RATE);
  // The speaker (JFK) says the sentence twice, with 15 s between; the room (six copies of
  // another reader's sentences, each from its own point, summed) talks all along, 10 dB under
  // the speaker's voice.
  const layout = [
    { at: seconds(5), voice: true },
    { at: seconds(5) + jfk.length + seconds(15), voice: true },
  ];
  const length = layout[1]!.at + jfk.length + seconds(15);
  const room = new Float32Array(length);
  for (let talker = 0; talker < 6; talker++) {
    const from = Math.floor(((talker + 0.5) / 6) * reader.length);
    for (let i = 0; i < length; i++) room[i]! += reader[(from + i) % reader.length]!;
  }
  const track = new Float32Array(length);
  const gain = 10 ** ((voiceLevelDbfs(jfk) - voiceLevelDbfs(room) - 10) / 20);
  for (let i = 0; i < length; i++) track[i] = gain * room[i]!;
  for (const { at } of layout) for (let i = 0; i < jfk.length; i++) track[at + i]! += jfk[i]!;
  const pcm = toPcm(track);

  const cut = async (quieterByDb: number) => {
    const segments: SpeechAudio[] = [];
    const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
    const segmenter = { ...DEFAULT_SEGMENTER, speaker: { ...DEFAULT_SPEAKER_LEVEL, quieterByDb } };
    const stream = streams.open({ session: '0123456789abcdef01234567', startOffset: 0, segmenter, onSecond: () => {}, onSegment: (segment) => segments.push(segment) });
    streams.write(stream, pcm);
    await streams.close(stream);
    return segments;
  };
  const firstEnd = (layout[0]!.at + jfk.length) / SAMPLE_RATE;
  const overSpeaker = (segment: SpeechAudio) => layout.some(({ at }) => segment.start < (at + jfk.length) / SAMPLE_RATE && segment.end > at / SAMPLE_RATE);
  const roomAloneAfterSpeaker = (segments: SpeechAudio[]) => segments.filter((segment) => segment.start >= firstEnd && !overSpeaker(segment));
  const describe = (segments: SpeechAudio[]) => segments.map((segment) => `${segment.start.toFixed(1)}-${segment.end.toFixed(1)}`).join(' ');

  const without = await cut(Infinity);
  assert.ok(roomAloneAfterSpeaker(without).length > 0, `without the rule the room alone is cut into segments too: ${describe(without)}`);
  const segments = await cut(DEFAULT_SPEAKER_LEVEL.quieterByDb);
  assert.is(describe(roomAloneAfterSpeaker(segments)), '', `segments over the room alone, among ${describe(segments)}`);
  for (const { at } of layout) {
    const start = at / SAMPLE_RATE;
    assert.ok(segments.some((segment) => overSpeaker(segment) && segment.end > start && segment.start < start + jfk.length / SAMPLE_RATE), `the sentence at ${start} s is kept: ${describe(segments)}`);
  }
});

test.run();
