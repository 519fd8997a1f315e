const test = require("node:test");
const assert = require("node:assert");
const { capitalize } = require("./capitalize");

test("capitalizes each word", () => {
  assert.strictEqual(capitalize("hello wORLD"), "Hello World");
  assert.strictEqual(capitalize("a"), "A");
});
