const test = require("node:test");
const assert = require("node:assert");
const { toCsv } = require("./csv");

test("plain cells", () => {
  assert.strictEqual(toCsv([["a", 1], ["b", 2]]), "a,1\nb,2");
});

test("a cell with a comma stays one cell", () => {
  assert.strictEqual(toCsv([["Smith, Ann", 3]]), '"Smith, Ann",3');
});
