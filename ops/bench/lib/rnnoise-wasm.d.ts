// @echogarden/rnnoise-wasm ships an Emscripten module without type declarations: the part used here.
declare module '@echogarden/rnnoise-wasm' {
  export interface RnnoiseModule {
    HEAPF32: Float32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    _rnnoise_get_frame_size(): number;
    _rnnoise_process_frame(state: number, out: number, input: number): number;
  }
  const createRnnoise: () => Promise<RnnoiseModule>;
  export default createRnnoise;
}
