"""A small unittest module for the harness's own tests (not one of CPython's)."""

import unittest


def helper_with_generator(n):
    def gen():
        yield from range(n)
    return list(gen())


def converted_or_not():
    """Whether this runs as converted code (its code object is generated)."""
    import sys

    import autograph.api
    return autograph.api._TRANSPILER.is_converted_code(sys._getframe().f_code)


class Sample(unittest.TestCase):
    def test_passes(self):
        total = 0
        for i in range(3):
            total += i
        self.assertEqual(total, 3)
        self.assertEqual(helper_with_generator(3), [0, 1, 2])

    def test_fails_both_ways(self):
        self.assertEqual(1, 2)

    def test_errors_both_ways(self):
        raise KeyError("k")

    def test_differs(self):
        # Passes unconverted only: the harness must see the difference.
        self.assertFalse(converted_or_not())

    @unittest.skip("skipped both ways")
    def test_skipped(self):
        pass

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    async def test_coroutine_method(self):
        pass
