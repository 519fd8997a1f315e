// A minimal .env reader: KEY=VALUE lines, # comments.
const fs = require("node:fs");

function parseEnv(text) {
  const values = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || !line.includes("=")) continue;
    const at = line.indexOf("=");
    values[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return values;
}

function readEnvFile(file) {
  return parseEnv(fs.readFileSync(file, "utf8"));
}

module.exports = { parseEnv, readEnvFile };
