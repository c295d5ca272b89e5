// Converts face-api's published expression model (TensorFlow.js weights) to ONNX.
// Input `input` float32 [N, 3, 112, 112], RGB 0..255 (normalisation is inside the graph);
// outputs `probs` (softmax) and `logits`, [N, 7]. The output bytes depend only on the weights.
import { writeFile } from 'node:fs/promises';
import { readTfjsWeights } from './faceapi/weights.ts';
import { buildExpressionNet, CLASSES } from './faceapi/expression-net.ts';
import { encodeModel } from './faceapi/onnx-proto.ts';

export async function convertFaceExpressionModel(weightsManifestPath: string, outPath: string): Promise<void> {
  const weights = await readTfjsWeights(weightsManifestPath);
  const model = encodeModel({
    ...buildExpressionNet(weights),
    producer: 'emotion-stream faceapi-to-onnx',
    metadata: {
      labels: CLASSES.join(','),
      source: '@vladmandic/face-api model/face_expression_model (TensorFlow.js weights)',
      input: 'RGB float 0..255 NCHW 112x112 face crop',
    },
  });
  await writeFile(outPath, model);
}
