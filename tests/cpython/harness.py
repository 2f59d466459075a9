"""Run a CPython test module twice per test: as it is, and with each test method converted.

For every ``unittest`` test method ``C.test_x`` of ``test.<module>``, the module's
tests run in pairs: ``C('test_x')`` as CPython ships it, then a twin whose
``test_x`` is ``autograph.convert(C.test_x)``. The module is declared the user's
code (``autograph.convert_modules``), so the helpers it defines and the functions,
classes and lambdas each test defines are converted when converted code calls
them, although the module lives in the standard library's folder.

Each run's *outcome* is what ``unittest`` saw: ``pass``, ``fail`` (an assertion
failed), ``error:<ExceptionType>``, ``skip``, ``xfail``, ``xpass``; for a test
with failing subtests, the sorted list of its failing subtests and their outcomes.
Two runs agree when their outcomes are equal.

Doctest-based tests and test methods that are generators or coroutines
(``IsolatedAsyncioTestCase``) are not compared: converting those is refused by
design, and converted code calls them as they are.
"""

from __future__ import annotations

import copy
import doctest
import importlib
import inspect
import io
import os
import signal
import sys
import time
import types
import unittest
import warnings
from dataclasses import dataclass, field

# Tests that take longer than this (converted or not) are stopped and count as errors.
DEFAULT_TIMEOUT_S = 30.0

# The language-semantics modules run by default: statements, expressions, scopes,
# exceptions, pattern matching, context managers, classes and calls.
DEFAULT_MODULES = (
    "test_asyncgen", "test_augassign", "test_baseexception", "test_binop", "test_bool",
    "test_call", "test_class", "test_compare", "test_contains", "test_contextlib",
    "test_contextlib_async", "test_coroutines", "test_decorators", "test_descr",
    "test_dictcomps", "test_dynamic", "test_except_star", "test_exception_group",
    "test_exception_variations", "test_exceptions", "test_format", "test_fstring",
    "test_funcattrs", "test_generator_stop", "test_generators", "test_genericclass",
    "test_global", "test_grammar", "test_index", "test_int_literal", "test_isinstance",
    "test_iter", "test_keywordonlyarg", "test_named_expressions", "test_opcodes", "test_patma",
    "test_positional_only_arg", "test_print", "test_property", "test_raise", "test_richcmp",
    "test_scope", "test_slice", "test_string_literals", "test_subclassinit", "test_super",
    "test_syntax", "test_type_annotations", "test_typechecks", "test_unary", "test_unpack",
    "test_with",
)


class HarnessTimeout(Exception):
    """A test ran longer than the harness allows."""


@dataclass
class TestOutcome:
    """The outcomes of one test, unconverted and converted."""

    test_id: str
    original: str = ""
    converted: str = ""
    details: dict = field(default_factory=dict)   # "original"/"converted" -> message
    seconds: dict = field(default_factory=dict)

    @property
    def agrees(self) -> bool:
        return self.original == self.converted

    def to_json(self) -> dict:
        return {"id": self.test_id, "original": self.original, "converted": self.converted,
                "details": self.details, "seconds": self.seconds}


class _Recorder(unittest.TestResult):
    """A ``TestResult`` that keeps one outcome per test instance run."""

    def __init__(self):
        super().__init__()
        self.buffer = True            # tests' printing stays out of the report
        self.outcomes = {}            # id(test) -> [outcome, details]
        self.started = {}
        self.elapsed = {}

    def _set(self, test, outcome, detail=""):
        entry = self.outcomes.setdefault(id(test), ["pass", ""])
        if entry[0] == "pass":
            entry[0], entry[1] = outcome, detail
        elif isinstance(entry[0], list) and isinstance(outcome, list):
            entry[0].extend(outcome)
            entry[1] = entry[1] or detail

    def startTest(self, test):
        super().startTest(test)
        self.outcomes[id(test)] = ["pass", ""]
        self.started[id(test)] = time.perf_counter()

    def stopTest(self, test):
        super().stopTest(test)
        self.elapsed[id(test)] = time.perf_counter() - self.started.pop(id(test), 0.0)

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, _error_outcome(err), _detail(err))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "fail", _detail(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "xfail", _detail(err))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is None:
            return
        failed = "fail" if issubclass(err[0], test.failureException) else _error_outcome(err)
        self._set(test, [f"{subtest._subDescription()}: {failed}"], _detail(err))


def _error_outcome(err) -> str:
    return f"error:{err[0].__name__}"


def _detail(err) -> str:
    if isinstance(err, tuple) and len(err) == 3:
        text = "".join(__import__("traceback").format_exception_only(err[0], err[1]))
        return text.strip()[:2000]
    return str(err)[:2000]


def _outcome_text(outcome) -> str:
    if isinstance(outcome, list):
        return "subtests[" + "; ".join(sorted(set(outcome))) + "]"
    return outcome


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


def _test_function(test):
    """The function a ``TestCase`` runs for its test, or None for doctests and the like."""
    if isinstance(test, (doctest.DocTestCase, unittest.FunctionTestCase)):
        return None
    name = getattr(test, "_testMethodName", None)
    if name is None:
        return None
    method = inspect.getattr_static(type(test), name, None)
    if isinstance(method, staticmethod):
        return None
    return method if isinstance(method, types.FunctionType) else None


def _unwrapped(fn):
    seen = 0
    while hasattr(fn, "__wrapped__") and seen < 20:
        fn = fn.__wrapped__
        seen += 1
    return fn


def _convertible(fn) -> bool:
    """Whether the test function is an ordinary function (a generator or coroutine is
    called as it is by converted code, and converting one directly is refused)."""
    inner = _unwrapped(fn)
    return not (inspect.isgeneratorfunction(inner) or inspect.iscoroutinefunction(inner)
                or inspect.isasyncgenfunction(inner))


def _converted_twin(test, fn):
    import autograph

    twin = copy.copy(test)
    twin._cleanups = []
    twin._outcome = None
    twin._autograph_twin = True
    setattr(twin, test._testMethodName, types.MethodType(autograph.convert(fn), twin))
    return twin


class _Timer:
    """Stops a test after ``seconds`` with ``HarnessTimeout`` (a SIGALRM in the main
    thread); a no-op where signals are unavailable."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.enabled = hasattr(signal, "setitimer") and seconds > 0

    def _fire(self, signum, frame):
        raise HarnessTimeout(f"test ran longer than {self.seconds:g}s")


class _TimedSuite(unittest.TestSuite):
    """A suite whose tests each run under the harness's time limit."""

    def __init__(self, tests, timer):
        super().__init__()
        self._timer = timer
        for t in tests:
            self.addTest(t)

    def run(self, result, debug=False):
        # TestSuite.run calls test(result); route it through the timer.
        tests = list(self._tests)
        self._tests = [_Timed(t, self._timer) for t in tests]
        try:
            return super().run(result, debug)
        finally:
            self._tests = tests


class _Timed:
    """Calls ``test(result)`` under the timer; looks like the test to ``TestSuite``
    (its class fixtures are found through ``__class__``)."""

    def __init__(self, test, timer):
        self._test = test
        self._timer = timer

    @property
    def __class__(self):
        return self._test.__class__

    def __getattr__(self, name):
        return getattr(self._test, name)

    def __call__(self, result):
        if not self._timer.enabled:
            return self._test(result)
        previous = signal.signal(signal.SIGALRM, self._timer._fire)
        signal.setitimer(signal.ITIMER_REAL, self._timer.seconds)
        try:
            return self._test(result)
        except HarnessTimeout as error:   # raised outside the test's own try blocks
            result.addError(self._test, (type(error), error, error.__traceback__))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


@dataclass
class ModuleReport:
    """The outcomes of one module's tests."""

    module: str
    outcomes: list            # of TestOutcome
    not_compared: int = 0     # doctests, generator and coroutine test methods
    seconds: float = 0.0
    error: str | None = None  # the module could not be imported or loaded

    def to_json(self) -> dict:
        return {"module": self.module, "outcomes": [o.to_json() for o in self.outcomes],
                "not_compared": self.not_compared, "seconds": self.seconds,
                "error": self.error}

    @classmethod
    def from_json(cls, data) -> ModuleReport:
        outcomes = [TestOutcome(o["id"], o["original"], o["converted"], o["details"],
                                o.get("seconds", {})) for o in data["outcomes"]]
        return cls(data["module"], outcomes, data["not_compared"], data["seconds"],
                   data["error"])


def run_module(name: str, timeout: float = DEFAULT_TIMEOUT_S, only=None) -> ModuleReport:
    """Run the tests of ``test.<name>`` (or of the module ``name`` if it is dotted)
    unconverted and converted, in pairs.

    ``only``: a set of test ids (or id prefixes) to restrict the run to.
    """
    import autograph

    start = time.perf_counter()
    module_name = name if "." in name else f"test.{name}"
    try:
        module = importlib.import_module(module_name)
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    except (Exception, unittest.SkipTest) as error:
        return ModuleReport(name, [], error=f"{type(error).__name__}: {error}")
    autograph.convert_modules(module_name)
    pairs, not_compared = [], 0
    for test in _flatten(suite):
        if only and not any(test.id() == o or test.id().startswith(o + ".") for o in only):
            continue
        fn = _test_function(test)
        if fn is None or not _convertible(fn):
            not_compared += 1
            continue
        pairs.append((test, _converted_twin(test, fn)))
    recorder = _Recorder()
    timer = _Timer(timeout)
    ordered = [t for pair in pairs for t in pair]
    with warnings.catch_warnings():
        _run_quietly(_TimedSuite(ordered, timer), recorder)
    outcomes = []
    for test, twin in pairs:
        out = TestOutcome(test.id())
        for label, t in (("original", test), ("converted", twin)):
            outcome, detail = recorder.outcomes.get(id(t), ["error:NotRun", "not run"])
            setattr(out, label, _outcome_text(outcome))
            if detail and outcome != "pass":
                out.details[label] = detail
            out.seconds[label] = round(recorder.elapsed.get(id(t), 0.0), 4)
        outcomes.append(out)
    return ModuleReport(name, outcomes, not_compared, time.perf_counter() - start)


def _run_quietly(suite, result):
    """Run ``suite``; module-level output (fixtures) goes nowhere."""
    sink = io.StringIO()
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = sink
    try:
        suite.run(result)
    finally:
        sys.stdout, sys.stderr = stdout, stderr
    # Errors of class and module fixtures are reported against a placeholder test.
    return result


def default_timeout() -> float:
    return float(os.environ.get("AUTOGRAPH_CPYTHON_TIMEOUT", DEFAULT_TIMEOUT_S))
