// where-am-i.ts from another folder, sharing its import: bundled together, the two run from one
// folder of bundles, the module they share written once (bus/typescript-bundle.ts).
import { equal } from 'uvu/assert';
import { whereIsThis } from './where-is-this.ts';

console.log(JSON.stringify({ url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename, imported: whereIsThis(), packageLoaded: typeof equal }));
