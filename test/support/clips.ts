// The clip maker lives in ops/ (npm start's demo stream is made with it); the tests keep
// importing it from here.
export { makeClip, speak, type ClipAudio, type ClipSpec, type ClipVideo } from '../../ops/support/clips.ts';
