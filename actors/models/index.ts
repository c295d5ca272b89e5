// The service's models as code outside it uses them (the lab in ops/bench, its setup): their
// files and manifest, loading one into ONNX Runtime, and whether this processor takes the
// speech models' signed 8-bit kernel.
export { MODEL_FILES, type SpeechModel } from './files.ts';
export { MIRROR, MODEL_ASSETS, type AssetEntry } from './manifest.ts';
export { sha256File } from './hash.ts';
export { loadModel, ort } from './onnx.ts';
export { thisProcessorMultipliesSignedBytesExactly } from './signed-byte-products.ts';
