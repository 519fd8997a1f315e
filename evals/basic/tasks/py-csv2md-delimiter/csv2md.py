"""Turns a CSV file into a Markdown table.

    python3 csv2md.py people.csv > people.md
"""
import csv
import sys


def to_markdown(rows):
    """Rows (the first is the header) as the lines of a Markdown table."""
    header, *body = rows
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in body:
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main(argv):
    if len(argv) != 1:
        print("usage: csv2md.py FILE", file=sys.stderr)
        return 2
    with open(argv[0], newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    print("\n".join(to_markdown(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
