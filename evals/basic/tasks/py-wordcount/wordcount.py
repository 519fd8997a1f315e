import re


def count_words(text):
    """How many times each word occurs, case-insensitively."""
    counts = {}
    for word in re.findall(r"[A-Za-z']+", text):
        counts[word] = counts.get(word, 0) + 1
    return counts
