// "hello wORLD" -> "Hello World": each word's first letter upper case, the rest lower.
function capitalize(text) {
  return text
    .split(" ")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ");
}

module.exports = { capitalize };
