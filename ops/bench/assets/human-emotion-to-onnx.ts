// Converts the emotion model published in @vladmandic/human (models/emotion.json + emotion.bin,
// a TensorFlow.js graph model of oarriaga's mini-Xception) to ONNX.
// Input `input` float32 [N, 3, 64, 64], RGB 0..255 (Human's grey conversion and scaling are
// inside the graph); outputs `probs` (softmax) and `logits`, [N, 7], in EMOTION_CLASSES order
// (angry, disgust, fear, happy, sad, surprise, neutral). The output bytes depend only on the model.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { encodeModel } from '../../assets/faceapi/onnx-proto.ts';
import { readWeightGroups, type ManifestGroup } from '../../assets/faceapi/weights.ts';
import { buildEmotionNet, EMOTION_CLASSES, type GraphNode } from './human/emotion-net.ts';

interface GraphModelJson {
  format?: string;
  modelTopology: { node: GraphNode[] };
  weightsManifest: ManifestGroup[];
}

export async function convertHumanEmotionModel(modelJsonPath: string, outPath: string): Promise<void> {
  const json = JSON.parse(await readFile(modelJsonPath, 'utf8')) as GraphModelJson;
  if (json.format !== 'graph-model') throw new Error(`${modelJsonPath} is not a TensorFlow.js graph model`);
  const weights = await readWeightGroups(json.weightsManifest, dirname(modelJsonPath));
  const model = encodeModel({
    ...buildEmotionNet(json.modelTopology.node, weights),
    producer: 'emotion-stream human-emotion-to-onnx',
    metadata: {
      labels: EMOTION_CLASSES.join(','),
      source: '@vladmandic/human models/emotion.json (TensorFlow.js graph model of oarriaga mini-Xception)',
      input: 'RGB float 0..255 NCHW 64x64 face crop',
    },
  });
  await writeFile(outPath, model);
}
