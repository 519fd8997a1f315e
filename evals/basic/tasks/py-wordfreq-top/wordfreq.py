"""Prints the most frequent words of a text file.

    python3 wordfreq.py FILE
"""
import re
import sys
from collections import Counter


def top_words(text, count):
    """The `count` most frequent words of `text` (lower case), with their counts."""
    words = re.findall(r"[a-z']+", text.lower())
    return Counter(words).most_common(count)


def main(argv):
    if len(argv) != 1:
        print("usage: wordfreq.py FILE", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        text = f.read()
    for word, count in top_words(text, 3):
        print(f"{word} {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
