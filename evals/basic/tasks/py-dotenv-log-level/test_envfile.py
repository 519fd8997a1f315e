import unittest
from envfile import parse_env


class EnvFileTest(unittest.TestCase):
    def test_comments_and_blanks(self):
        self.assertEqual(parse_env("# c\n\nA=1\nB = two \n"), {"A": "1", "B": "two"})


if __name__ == "__main__":
    unittest.main()
