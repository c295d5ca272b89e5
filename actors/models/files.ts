// File names of the models inside the models folder (MODELS_DIR). The assets manifest says where each comes from.
export const MODEL_FILES = {
  faceDetector: 'face_detection_yunet_2023mar_dynamic.onnx',
  expressions: 'faceapi_expression_112.onnx',
  voiceActivity: 'silero_vad_v6.onnx',
  speechTinyEncoder: 'moonshine_tiny_encoder.onnx',
  speechTinyDecoder: 'moonshine_tiny_decoder_merged.onnx',
  speechBaseEncoder: 'moonshine_base_encoder.onnx',
  speechBaseDecoder: 'moonshine_base_decoder_merged.onnx',
} as const;

/** The two sizes of Moonshine: tiny for clean speech, base (twice the CPU) for noisy speech. */
export type SpeechModel = 'tiny' | 'base';

export const SPEECH_MODEL_FILES: Record<SpeechModel, { encoder: string; decoder: string }> = {
  tiny: { encoder: MODEL_FILES.speechTinyEncoder, decoder: MODEL_FILES.speechTinyDecoder },
  base: { encoder: MODEL_FILES.speechBaseEncoder, decoder: MODEL_FILES.speechBaseDecoder },
};
