const test = require("node:test");
const assert = require("node:assert");
const { slugify } = require("./slug");

test("slugs", () => {
  assert.strictEqual(slugify("Hello, World!"), "hello-world");
  assert.strictEqual(slugify("  Crème brûlée  "), "creme-brulee");
});
