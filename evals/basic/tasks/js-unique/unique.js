// The values of `list` without repeats, in order of first appearance.
function unique(list) {
  return list.filter((value, index) => list.indexOf(value) !== index);
}

module.exports = { unique };
