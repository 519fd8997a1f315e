// Reads settings.json beside this file.
const fs = require("node:fs");
const path = require("node:path");

function loadSettings() {
  const text = fs.readFileSync(path.join(__dirname, "settings.json"), "utf8");
  return JSON.parse(text);
}

module.exports = { loadSettings };
