// `text` padded on the left with spaces to `width` characters.
function padLeft(text, width) {
  let out = String(text);
  while (out.length < width) {
    out = out + " ";
  }
  return out;
}

module.exports = { padLeft };
