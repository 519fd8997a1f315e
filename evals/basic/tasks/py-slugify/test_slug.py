import unittest
from slug import slugify


class SlugTest(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_spaces_and_symbols(self):
        self.assertEqual(slugify("  Rust & Python -- 2024  "), "rust-python-2024")

    def test_empty(self):
        self.assertEqual(slugify("!!!"), "")


if __name__ == "__main__":
    unittest.main()
