// Ingest as code outside the service uses it (the lab in ops/bench): the analysis frame's size
// and scaling, ffprobe, and the decoder spawner with the environment its decoders get.
export { analysisSize, ffprobePath, scaleFilter } from './ffmpeg-args.ts';
export { DecoderSpawner } from './decoder-spawner.ts';
export { decoderEnvironment } from './decoder-environment.ts';
