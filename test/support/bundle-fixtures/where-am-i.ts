// Prints what a module knows of where it is, what a module it imports knows, and whether a
// package loads from where the bundle is: a bundle must keep each file's own
// (bus/typescript-bundle.ts).
import { equal } from 'uvu/assert';
import { whereIsThis } from './elsewhere/where-is-this.ts';

console.log(JSON.stringify({ url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename, imported: whereIsThis(), packageLoaded: typeof equal }));
