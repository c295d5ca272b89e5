// The demo stream's clip: face photos with different expressions in turn, each while a
// synthetic voice says a sentence in its tone, so the emotions, faces, transcript and sentiment
// charts all move. Made at start from what the project already declares (the face photos of
// ops/assets/media.ts, verified by sha256; espeak-ng), and cached, so a later start finds it.
import { join, resolve } from 'node:path';
import type { Config } from '../../bus/config.ts';
import type { OpsConfig } from '../ops-config.ts';
import { ensureAssets } from '../assets/install.ts';
import { MEDIA_ASSETS } from '../assets/media.ts';
import { makeClip, mediaSeconds, speak } from '../support/clips.ts';

/** A photo of `ops/assets/media.ts` (var/media/faces/<photo>.jpg) shown while `sentence` is spoken. */
export interface Scene {
  photo: string;
  sentence: string;
}

export const DEMO_SCENES: readonly Scene[] = [
  { photo: 'happy', sentence: 'What a wonderful day. I am so happy to see all of you here.' },
  { photo: 'sad', sentence: 'I feel sad and tired. Everything went wrong this week.' },
  { photo: 'surprised', sentence: 'Wow, what a great surprise. I really love it.' },
  { photo: 'angry', sentence: 'This is awful. I hate waiting, and I am really angry now.' },
  { photo: 'neutral', sentence: 'The next meeting starts at ten, in the room on the left.' },
];

// Silence after each sentence: longer than the pause that ends a transcribed segment (1.2 s),
// so each sentence is transcribed, and scored, on its own.
const PAUSE_SECONDS = 2;

// Cheap to decode for the session's ingest, which samples faces at 4 frames a second anyway.
const SIZE = { width: 640, height: 360, fps: 15 };

/** The face photos the scenes show, fetched and verified unless already in place. */
async function ensurePhotos(scenes: readonly Scene[], config: Config & OpsConfig): Promise<void> {
  const files = new Set(scenes.map((scene) => `faces/${scene.photo}.jpg`));
  await ensureAssets(MEDIA_ASSETS.filter((entry) => files.has(entry.file)), {
    folders: { models: config.modelsDir, media: config.mediaDir },
    mirrors: (config.assetsMirror ?? '').split(':').filter((folder) => folder !== '').map((folder) => resolve(folder)),
    cacheDir: resolve(config.varDir, 'assets-cache'),
  });
}

/** Makes the clip of `scenes` in `dir` (or finds it there) and returns its path: FLV, ready to be looped with `-c copy`. */
export async function demoClip(dir: string, config: Config & OpsConfig, scenes: readonly Scene[] = DEMO_SCENES): Promise<string> {
  await ensurePhotos(scenes, config);
  const timed = [];
  for (const scene of scenes) {
    const wav = await speak(scene.sentence, join(dir, 'speech'));
    const spoken = mediaSeconds(wav);
    // Whole seconds: each photo lasts a whole number of frames, and picture and voice stay in step.
    timed.push({ image: join(config.mediaDir, 'faces', `${scene.photo}.jpg`), wav, spoken, seconds: Math.ceil(spoken + PAUSE_SECONDS) });
  }
  return makeClip(
    {
      ...SIZE,
      seconds: timed.reduce((sum, scene) => sum + scene.seconds, 0),
      video: { type: 'images', images: timed.map(({ image, seconds }) => ({ image, seconds })) },
      audio: { type: 'wavs', parts: timed.flatMap(({ wav, spoken, seconds }) => [{ wav }, { silence: seconds - spoken }]) },
    },
    dir,
  );
}
