// Bundles where-am-i.ts from inside a bundle, as a bundled test file or service does, and prints the bundle's path.
import { bundled } from '../../../bus/typescript-bundle.ts';

console.log(await bundled(new URL('./where-am-i.ts', import.meta.url).pathname));
