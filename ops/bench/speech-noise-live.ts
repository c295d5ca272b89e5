// Speech under noise through the live path: each condition of speech-noise.ts (clean, pink
// noise and music at 20, 10 and 5 dB SNR) encoded as a clip (AAC at 64 kb/s in FLV, as an
// encoder sends it; audio only, so that face analysis of a picture takes no CPU from speech), looped into a local RTMP server, analysed by a session of the service as configured
// (stream -> ingest -> VAD -> Moonshine), and its transcript scored against the read text,
// for each voice (people recorded, espeak-ng) and both.
// The service reads its configuration from this process's environment, so a configuration is
// compared by running this script with and without it. SPEECH_NOISE_LIVE_TRANSCRIPTS=<file> keeps
// every session's transcript there. See ops/bench/README-speech-noise.md.
import { appendFileSync } from 'node:fs';
import { readOpsConfig } from '../ops-config.ts';
import { CONDITIONS, VOICES, conditionName, errorRatePerVoice, mixedTrack, readSpeech, referenceText, type Corpus } from './lib/speech-corpus.ts';
import { bestLoop, runSessionsFor, streamTrack, transcript, withLiveSpeechStack } from './lib/live-speech.ts';
import { SAMPLE_RATE } from './lib/speech.ts';
import { fixed, printTable } from './lib/stats.ts';

const tooling = readOpsConfig();
/** Where each session's segments and best-aligned loop are appended as a JSON line, to read its errors. */
const transcriptsFile = process.env.SPEECH_NOISE_LIVE_TRANSCRIPTS;

/** Loops of the clip each session sees: whichever loop it joins mid-way, one whole loop follows. */
const LOOPS = 2.3;

await withLiveSpeechStack('speech-noise-live', async (stack) => {
  const corpus: Corpus = await readSpeech(tooling.mediaDir, stack.dir);
  const reference = referenceText(corpus);
  const loopSeconds = corpus.track.length / SAMPLE_RATE;
  const sessions: { name: string; id: string }[] = [];
  for (const [n, condition] of CONDITIONS.entries()) {
    sessions.push({ name: conditionName(condition), id: await streamTrack(stack, `condition-${n}`, mixedTrack(corpus, condition)) });
  }
  await runSessionsFor(stack.services, sessions.map((session) => session.id), LOOPS * loopSeconds);
  const rows: string[][] = [];
  for (const { name, id } of sessions) {
    const texts = (await transcript(stack.services, id)).map((segment) => segment.text);
    const loop = bestLoop(reference, texts);
    const voices = errorRatePerVoice(corpus, loop.text);
    if (transcriptsFile) appendFileSync(transcriptsFile, `${JSON.stringify({ condition: name, segments: texts, bestLoop: loop.text })}\n`);
    rows.push([
      name,
      String(texts.length),
      ...VOICES.map((voice) => fixed(voices.get(voice)!, 3)),
      fixed(loop.errors / loop.words, 3),
      loop.text.length > 90 ? `${loop.text.slice(0, 87)}...` : loop.text,
    ]);
  }
  printTable(
    `Word error rate through the live path (${corpus.sentences.length} sentences, ${fixed(loopSeconds)} s a loop, best-aligned loop of ${LOOPS} seen)`,
    ['condition', 'segments', ...VOICES.map((voice) => `WER, ${voice}`), 'WER, both', 'transcript of that loop'],
    rows,
  );
});
