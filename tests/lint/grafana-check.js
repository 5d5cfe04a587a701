// grafana-check: type-checks a Grafana dashboard JSON against Grafana's
// published dashboard schema (npm @grafana/schema, the classic "x" model
// that Grafana's JSON import accepts). The dashboard is written into a
// TypeScript file as an object literal typed Dashboard, so that unknown
// fields, wrong types and values outside an enumeration are all errors;
// tsc --noEmit --strict then judges it. TypeScript enums are nominal, so a
// JSON string can never be one; the schema's enums are rewritten as unions
// of their values, which is what the JSON carries. Usage:
// node grafana-check.js FILE
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const file = process.argv[2];
if (!file) {
	console.error('usage: node grafana-check.js DASHBOARD.json');
	process.exit(2);
}
const dashboard = JSON.parse(fs.readFileSync(file, 'utf8'));
// Under a regress script, in its TW_TMP (removed after it, whatever the
// outcome); alone, in the system's: a failure keeps the files it names.
const dir = fs.mkdtempSync(path.join(process.env.TW_TMP || os.tmpdir(), 'tw-grafana-'));
const gen = path.join(__dirname, 'node_modules/@grafana/schema/dist/types/raw/dashboard/x/types.gen.d.ts');
const schema = path.join(dir, 'schema');
fs.writeFileSync(schema + '.d.ts', fs.readFileSync(gen, 'utf8').replace(
	/export declare enum (\w+) \{([^}]*)\}/g, (all, name, body) => {
		const values = [...body.matchAll(/=\s*("[^"]*"|-?\d+)/g)].map((m) => m[1]);
		return `export type ${name} = ${values.join(' | ')};`;
	}));
fs.writeFileSync(path.join(dir, 'dashboard.ts'),
	`import type { Dashboard } from ${JSON.stringify(schema)};\n` +
	`export const dashboard: Dashboard = ${JSON.stringify(dashboard, null, 1)};\n`);
const tsc = path.join(__dirname, 'node_modules/typescript/bin/tsc');
try {
	execFileSync(process.execPath, [tsc, '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2020',
		'--moduleResolution', 'node', path.join(dir, 'dashboard.ts')], { stdio: 'inherit' });
} catch (e) {
	console.error(`${file}: does not match Grafana's dashboard schema (errors above; the line numbers are those of ${dir}/dashboard.ts)`);
	process.exit(1);
}
fs.rmSync(dir, { recursive: true });
console.log(`${file}: matches @grafana/schema's Dashboard (${(dashboard.panels || []).length} panels)`);
