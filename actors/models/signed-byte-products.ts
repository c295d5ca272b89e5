// Whether this processor multiplies unsigned by signed bytes exactly: with VNNI (AVX-VNNI or
// AVX512-VNNI), onnxruntime's kernel adds the products in 32 bits. Without it, the kernel uses
// an instruction that adds pairs of products in 16 bits and saturates, so weights stay unsigned
// (signed-weights.ts).
import { readFileSync } from 'node:fs';

const VNNI = /^flags\s*:.*\b(avx512_vnni|avx_vnni)\b/m;

/** From the text of /proc/cpuinfo. */
export function multipliesSignedBytesExactly(cpuinfo: string): boolean {
  return VNNI.test(cpuinfo);
}

/** This machine's answer; false where /proc/cpuinfo cannot be read (not Linux on x86). */
export function thisProcessorMultipliesSignedBytesExactly(): boolean {
  try {
    return multipliesSignedBytesExactly(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return false;
  }
}
