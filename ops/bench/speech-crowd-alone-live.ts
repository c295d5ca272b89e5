// The room while the speaker is silent, through the live path: the held-out sentences with
// 15 s of the crowd alone before, between their two halves and after them (withCrowdAlone),
// under six-talker babble at 10 and 5 dB and one competing talker at 10 dB, looped into a local
// RTMP server and analysed by a session of the service as configured. Per condition: the words
// written in segments that hold no sentence once the session has heard the speaker, and before.
// A session joins the loop anywhere, so each is placed on the track by the offset at which its
// segments overlap the sentences most.
//
//   node --import tsx ops/bench/speech-crowd-alone-live.ts [held-out|tuning]
//
// See ops/bench/README-speech-crowd.md, "The room while the speaker is silent".
import { readOpsConfig } from '../ops-config.ts';
import { CROWD_CONDITIONS, crowdTrack, readPart, withCrowdAlone, type Part } from './lib/crowd-corpus.ts';
import { runSessionsFor, streamTrack, transcript, withLiveSpeechStack, type LiveSegment } from './lib/live-speech.ts';
import type { Sentence } from './lib/speech-corpus.ts';
import { SAMPLE_RATE } from './lib/speech.ts';
import { printTable } from './lib/stats.ts';

const tooling = readOpsConfig();
const part: Part = process.argv[2] === 'tuning' ? 'tuning' : 'held out';
const LOOPS = 2.3;
const CONDITIONS = CROWD_CONDITIONS.filter((condition) => ['babble 10 dB', 'babble 5 dB', 'one talker 10 dB'].includes(condition.name));

/** Seconds of `segment`, moved by `offset` into a track of `loop` seconds, that overlap a sentence. */
function overlap(segment: LiveSegment, offset: number, loop: number, spans: readonly [number, number][]): number {
  const start = (((segment.start - offset) % loop) + loop) % loop;
  const end = start + (segment.end - segment.start);
  let total = 0;
  for (const shift of [0, loop]) for (const [from, to] of spans) total += Math.max(0, Math.min(end, to + shift) - Math.max(start, from + shift));
  return total;
}

const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;

await withLiveSpeechStack('speech-crowd-alone-live', async (stack) => {
  const corpus = withCrowdAlone(await readPart(tooling.mediaDir, part), SAMPLE_RATE);
  const loop = corpus.track.length / SAMPLE_RATE;
  const spans = corpus.sentences.map(({ start, length }: Sentence): [number, number] => [start / SAMPLE_RATE, (start + length) / SAMPLE_RATE]);
  const sessions: { name: string; id: string }[] = [];
  for (const [n, condition] of CONDITIONS.entries()) {
    sessions.push({ name: condition.name, id: await streamTrack(stack, `alone-${n}`, await crowdTrack(tooling.mediaDir, corpus, condition)) });
  }
  await runSessionsFor(stack.services, sessions.map((session) => session.id), LOOPS * loop);
  const rows: string[][] = [];
  for (const { name, id } of sessions) {
    const segments = (await transcript(stack.services, id)).filter((segment) => segment.text.trim() !== '');
    let best = { offset: 0, score: -1 };
    for (let offset = 0; offset < loop; offset += 0.1) {
      const score = segments.reduce((sum, segment) => sum + overlap(segment, offset, loop, spans), 0);
      if (score > best.score) best = { offset, score };
    }
    const holds = (segment: LiveSegment) => overlap(segment, best.offset, loop, spans) > 0;
    const firstSpeaker = segments.findIndex(holds);
    const words = { before: 0, after: 0, speaker: 0 };
    segments.forEach((segment, i) => {
      if (holds(segment)) words.speaker += wordCount(segment.text);
      else words[firstSpeaker === -1 || i < firstSpeaker ? 'before' : 'after'] += wordCount(segment.text);
      if (process.env.SPEECH_CROWD_TRANSCRIPTS) console.log(`  ${name} ${segment.start.toFixed(1)}-${segment.end.toFixed(1)} s ${holds(segment) ? 'sentence' : 'crowd alone'}: ${segment.text}`);
    });
    const sessionSeconds = Math.max(...segments.map((segment) => segment.end), 0);
    rows.push([name, `${words.before}`, `${words.after}`, `${words.speaker}`, `${segments.length}`, sessionSeconds.toFixed(0)]);
  }
  printTable(
    `The crowd alone for 15 s before, between and after the sentences, through the live path (${part} speakers, ${loop.toFixed(0)} s a loop, ${LOOPS} loops)`,
    ['condition', 'words over the crowd alone before the first sentence heard', 'words over the crowd alone after it', 'words in segments holding a sentence', 'segments with words', 'session seconds'],
    rows,
  );
});
