import unittest
from report import report


class ReportTest(unittest.TestCase):
    def test_average(self):
        self.assertEqual(report("ana", [1, 2]), "ana: average 1.50 over 2 scores")


if __name__ == "__main__":
    unittest.main()
