// The viewer's modules for node: they are ES modules served to browsers as .js, which node reads as CommonJS
// outside a package that says otherwise, so they are copied beside a package.json that does.
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const sources = fileURLToPath(new URL('../../Sources/ScreenRelay/Viewer/', import.meta.url));
const copy = mkdtempSync(join(tmpdir(), 'screenpub-viewer-'));
for (const name of readdirSync(sources).filter((name) => name.endsWith('.js'))) cpSync(join(sources, name), join(copy, name));
writeFileSync(join(copy, 'package.json'), '{"type": "module"}\n');
process.on('exit', () => rmSync(copy, { recursive: true, force: true }));

/// The module `name` (`wire.js`, `session.js`) of the viewer.
export function viewerModule(name) {
  return import(join(copy, name));
}
