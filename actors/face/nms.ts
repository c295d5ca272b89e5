// Greedy non-maximum suppression: keep the best-scoring box, drop every box overlapping
// it by more than the threshold, repeat.
import { iou, type Box } from './box.ts';

export function nms<T extends Box & { score: number }>(candidates: readonly T[], iouThreshold: number): T[] {
  const sorted = [...candidates].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const candidate of sorted) {
    if (kept.every((k) => iou(k, candidate) <= iouThreshold)) kept.push(candidate);
  }
  return kept;
}
