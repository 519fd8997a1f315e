import unittest
from wordfreq import top_words


class TopWordsTest(unittest.TestCase):
    def test_most_frequent_first(self):
        self.assertEqual(top_words("b a b c b a", 2), [("b", 3), ("a", 2)])

    def test_case_is_ignored(self):
        self.assertEqual(top_words("The the THE", 1), [("the", 3)])


if __name__ == "__main__":
    unittest.main()
