// Part of `npm run build`: packs a fresh embedded-store data directory for new installations to
// start from (see src/store/template.ts). Made once per PGlite version.
import { writeStoreTemplate } from '../dist/store/template.js';

const file = await writeStoreTemplate();
console.log(`embedded store template: ${file.split('/packages/')[1] ?? file}`);
