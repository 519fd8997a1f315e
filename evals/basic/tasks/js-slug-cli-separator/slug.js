#!/usr/bin/env node
// Makes a URL slug of its arguments: node slug.js "Hello, World!" -> hello-world
function slugify(text) {
  return text
    .toLowerCase()
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

if (require.main === module) {
  const words = process.argv.slice(2);
  console.log(slugify(words.join(" ")));
}

module.exports = { slugify };
