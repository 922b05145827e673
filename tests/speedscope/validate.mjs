// tests/speedscope/validate.mjs -- validate speedscope files against speedscope's published schema.
//
//   node validate.mjs SCHEMA FILE...   (AJV_DIR: the node_modules directory holding ajv)
// The schema is tests/speedscope/file-format-schema.json, a copy of what speedscope
// publishes at https://www.speedscope.app/file-format-schema.json (from the npm package
// speedscope 1.25.0, dist/release/file-format-schema.json).  Prints one line per file.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(path.resolve(process.env.AJV_DIR || ".", "x.js"));
const Ajv = require("ajv");
const [schemaFile, ...files] = process.argv.slice(2);
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(JSON.parse(readFileSync(schemaFile, "utf8")));
let bad = 0;
for (const f of files) {
    let doc;
    try {
        doc = JSON.parse(readFileSync(f, "utf8"));
    } catch (e) {
        console.log(`${f}: not JSON: ${e.message}`);
        bad++;
        continue;
    }
    if (validate(doc)) {
        console.log(`${f}: valid`);
    } else {
        console.log(`${f}: ${ajv.errorsText(validate.errors)}`);
        bad++;
    }
}
process.exit(bad ? 1 : 0);
