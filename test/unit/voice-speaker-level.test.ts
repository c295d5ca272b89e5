import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from '../../ops/support/uvu.ts';
import * as assert from 'uvu/assert';
import type { SpeechAudio } from '../../actors/voice/analyzer.ts';
import { SILENCE_DBFS, voiceLevelDbfs } from '../../actors/voice/level.ts';
import { DEFAULT_SEGMENTER } from '../../actors/voice/segmenter.ts';
import { DEFAULT_SPEAKER_LEVEL, SpeakerLevel, type SpeakerLevelOptions } from '../../actors/voice/speaker-level.ts';
import { VoiceActivityModel } from '../../actors/voice/vad.ts';
import { VoiceThread } from '../../actors/voice/threaded.ts';
import { VoiceStreams } from '../../actors/voice/voice-streams.ts';
import { readConfig } from '../../bus/config.ts';
import { readOpsConfig } from '../../ops/ops-config.ts';
import { jfkPcm, pcmToFloat, SAMPLE_RATE, toPcm, wavPcm } from '../../ops/support/voice-media.ts';

const SESSION = '0123456789abcdef01234567';

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

/** A segment at `level` dBFS standing well out of its own floor, as a voice does. */
const voice = (level: number) => ({ level, snrDb: 20 });

test('speaker level: while the background talks, a segment 8 dB or more under the loudest of the last minute is not the speaker', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.ok(speaker.keeps(voice(-30), 5, true), 'nothing heard yet: the first voice is kept, whatever its level');
  assert.ok(speaker.keeps(voice(-16), 10, true));
  assert.ok(speaker.keeps(voice(-23.9), 15, true), 'a softer sentence of the speaker, 7.9 dB under');
  assert.not.ok(speaker.keeps(voice(-24.1), 20, true), 'the room, 8.1 dB under');
  assert.not.ok(speaker.keeps(voice(-26), 25, true));
  assert.ok(speaker.keeps(voice(-26), 26, false), 'a quiet room: a soft voice is still written down');
});

test('speaker level: a segment left out does not lower the speaker, and a minute without one forgets it', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.ok(speaker.keeps(voice(-16), 0, true));
  for (let at = 5; at < 60; at += 5) assert.not.ok(speaker.keeps(voice(-26), at, true), `the room at ${at} s`);
  assert.ok(speaker.keeps(voice(-26), 61, true), 'a minute after the speaker, the next voice is heard');
  assert.ok(speaker.keeps(voice(-27), 62, true));
});

test('speaker level: with no speaker heard yet, a segment that does not stand 10 dB out of its own floor is the room', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.not.ok(speaker.keeps({ level: -20, snrDb: 9.9 }, 5, true), "a crowd's murmur");
  assert.not.ok(speaker.keeps({ level: -20, snrDb: 6 }, 10, true));
  assert.ok(speaker.keeps({ level: -20, snrDb: 6 }, 11, false), 'a quiet room or steady noise: the VAD alone decides');
  assert.ok(speaker.keeps({ level: -16, snrDb: 10.1 }, 20, true), 'a voice standing out of the crowd is the speaker');
  assert.ok(speaker.keeps({ level: -17, snrDb: 6 }, 25, true), 'once the speaker is known, a flat segment at about their level is theirs');
  assert.not.ok(speaker.keeps({ level: -20, snrDb: 8 }, 90, true), 'a minute after the speaker, the murmur is the room again');
});

test('speaker level: once the speaker is known, a flat segment a few dB under them is the room (a crowd 5 dB under the speaker)', () => {
  const speaker = new SpeakerLevel(DEFAULT_SPEAKER_LEVEL);
  assert.ok(speaker.keeps({ level: -16, snrDb: 12 }, 5, true));
  assert.not.ok(speaker.keeps({ level: -19.1, snrDb: 9.9 }, 10, true), 'flat and 3.1 dB under: the room');
  assert.ok(speaker.keeps({ level: -18.9, snrDb: 9.9 }, 15, true), "flat but 2.9 dB under: a weak sentence of the speaker's");
  assert.ok(speaker.keeps({ level: -21, snrDb: 10.1 }, 20, true), 'standing out of its floor: the speaker, 5 dB under');
  assert.ok(speaker.keeps({ level: -21, snrDb: 6 }, 25, false), 'a quiet room or steady noise: the VAD alone decides');
});

const seconds = (s: number) => Math.round(s * SAMPLE_RATE);

/** The seconds each of the speaker's sentences spans. */
type Sentences = { start: number; end: number }[];

/**
 * The speaker (JFK) says the sentence twice, 15 s after the start and with 15 s between; the
 * room (six copies of another reader's sentences, each from its own point, summed: not the
 * crowd the margins were chosen on) talks all along, `roomUnderDb` under the speaker's voice.
 * Returns the PCM and the seconds each sentence spans.
 */
async function speakerInTheRoom(roomUnderDb = 10): Promise<{ pcm: Buffer; sentences: Sentences }> {
  const jfk = pcmToFloat(await jfkPcm());
  const reader = await readerSentences();
  const starts = [seconds(15), seconds(15) + jfk.length + seconds(15)];
  const length = starts[1]! + jfk.length + seconds(15);
  const room = new Float32Array(length);
  for (let talker = 0; talker < 6; talker++) {
    const from = Math.floor(((talker + 0.5) / 6) * reader.length);
    for (let i = 0; i < length; i++) room[i]! += reader[(from + i) % reader.length]!;
  }
  const track = new Float32Array(length);
  const gain = 10 ** ((voiceLevelDbfs(jfk) - voiceLevelDbfs(room) - roomUnderDb) / 20);
  for (let i = 0; i < length; i++) track[i] = gain * room[i]!;
  for (const at of starts) for (let i = 0; i < jfk.length; i++) track[at + i]! += jfk[i]!;
  return { pcm: toPcm(track), sentences: starts.map((at) => ({ start: at / SAMPLE_RATE, end: (at + jfk.length) / SAMPLE_RATE })) };
}

type Span = Omit<SpeechAudio, 'samples'>;
const describe = (segments: Span[]) => segments.map((segment) => `${segment.start.toFixed(1)}-${segment.end.toFixed(1)}`).join(' ');

/** The segments `pcm` is cut into by the host's VAD and segmenter, kept and left out as the room's. */
async function cut(model: VoiceActivityModel, pcm: Buffer, speaker: SpeakerLevelOptions) {
  const segments: Span[] = [];
  const room: Span[] = [];
  const streams = new VoiceStreams({ model, maxBacklogSamples: Infinity, onShed: () => {}, onFailed: () => {} });
  const stream = streams.open({
    session: SESSION,
    startOffset: 0,
    segmenter: { ...DEFAULT_SEGMENTER, speaker },
    onSecond: () => {},
    onSegment: (segment) => segments.push(segment),
    onRoomSegment: (segment) => room.push(segment),
  });
  streams.write(stream, pcm);
  await streams.close(stream);
  return { segments, room };
}

/** The segments that overlap none of the speaker's sentences: the room alone. */
const roomAlone = (segments: Span[], sentences: Sentences) =>
  segments.filter((segment) => !sentences.some(({ start, end }) => segment.start < end && segment.end > start));

test('speaker level, with the VAD: the room talking on while the speaker is silent is not transcribed', async () => {
  const model = await VoiceActivityModel.load(readConfig().modelsDir);
  const { pcm, sentences } = await speakerInTheRoom();
  const without = await cut(model, pcm, { ...DEFAULT_SPEAKER_LEVEL, quieterByDb: Infinity, standsOutByDb: -Infinity });
  const alone = roomAlone(without.segments, sentences);
  const firstStart = sentences[0]!.start;
  assert.ok(alone.some((segment) => segment.end <= firstStart), `without the rules the room alone is cut into segments before the speaker: ${describe(without.segments)}`);
  assert.ok(alone.some((segment) => segment.start >= firstStart), `and after the speaker's first sentence: ${describe(without.segments)}`);
  const { segments, room } = await cut(model, pcm, DEFAULT_SPEAKER_LEVEL);
  assert.is(describe(roomAlone(segments, sentences)), '', `segments over the room alone, among ${describe(segments)}`);
  const reported = new Set(describe(room).split(' '));
  assert.equal(alone.filter((segment) => !reported.has(describe([segment]))), [], "each segment over the room alone is reported as the room's");
  for (const { start, end } of sentences) {
    assert.ok(segments.some((segment) => segment.end > start && segment.start < end), `the sentence at ${start} s is kept: ${describe(segments)}`);
  }
});

test('speaker level, with the VAD: a loud room, 5 dB under the speaker, is not transcribed after the speaker is heard', async () => {
  const model = await VoiceActivityModel.load(readConfig().modelsDir);
  const { pcm, sentences } = await speakerInTheRoom(5);
  const firstEnd = sentences[0]!.end;
  const afterTheSpeaker = (segments: Span[]) => roomAlone(segments, sentences).filter((segment) => segment.start >= firstEnd);

  const without = await cut(model, pcm, { ...DEFAULT_SPEAKER_LEVEL, flatQuieterByDb: Infinity });
  assert.ok(afterTheSpeaker(without.segments).length > 0, `without the rule for flat segments the room is kept: ${describe(without.segments)}`);
  const { segments } = await cut(model, pcm, DEFAULT_SPEAKER_LEVEL);
  assert.is(describe(afterTheSpeaker(segments)), '', `segments over the room alone after the first sentence, among ${describe(segments)}`);
  for (const { start, end } of sentences) {
    assert.ok(segments.some((segment) => segment.end > start && segment.start < end), `the sentence at ${start} s is kept: ${describe(segments)}`);
  }
});

test("the voice thread reports the speech it left out as the room's", async () => {
  const { pcm } = await speakerInTheRoom();
  const { room } = await cut(await VoiceActivityModel.load(readConfig().modelsDir), pcm, DEFAULT_SPEAKER_LEVEL);
  const expected = room.reduce((sum, segment) => sum + segment.speech, 0);
  const thread = await VoiceThread.start({ modelsDir: readConfig().modelsDir, maxBacklogSeconds: 600 });
  try {
    let reported = 0;
    let transcribed = 0;
    const stream = thread.open(SESSION, 0, {
      onSecond: () => {},
      onSegment: () => transcribed++,
      onRoomSpeech: (seconds) => (reported += seconds),
      onShed: (seconds) => assert.unreachable(`${seconds} s shed`),
      onFailed: (error) => assert.unreachable(error.message),
    });
    for (let at = 0; at < pcm.length; at += 4096) stream.write(pcm.subarray(at, at + 4096));
    await stream.close();
    assert.ok(expected > 5, `${expected} s of the room's speech left out`);
    assert.ok(Math.abs(reported - expected) < 1e-6, `${reported} s reported, ${expected} s left out`);
    assert.ok(transcribed >= 2, `${transcribed} segments handed on`);
  } finally {
    await thread.close();
  }
});

test.run();
