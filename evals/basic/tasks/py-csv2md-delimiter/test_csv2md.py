import unittest
from csv2md import to_markdown


class MarkdownTest(unittest.TestCase):
    def test_table(self):
        self.assertEqual(
            to_markdown([["name", "age"], ["Ann", "31"]]),
            ["| name | age |", "|---|---|", "| Ann | 31 |"],
        )


if __name__ == "__main__":
    unittest.main()
