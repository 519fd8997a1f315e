#!/usr/bin/env node
// Prints the first lines of a file: node head.js FILE
const fs = require("node:fs");

function firstLines(text, count) {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.slice(0, count);
}

function main(args) {
  if (args.length !== 1) {
    console.error("usage: head.js FILE");
    return 2;
  }
  const text = fs.readFileSync(args[0], "utf8");
  for (const line of firstLines(text, 10)) console.log(line);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));

module.exports = { firstLines };
