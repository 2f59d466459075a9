"""A sampling profiler of CPU time: where a stretch of code spends it, at no cost per call.

``StackSamples`` reads the Python stack every ``interval`` seconds of the process's
CPU time (``SIGPROF``) while it is switched on (``with samples: ...``), and counts
each function seen: inclusive (anywhere on the stack) and self (running). Unlike
``cProfile`` it adds nothing to each call, which would inflate the small functions
called thousands of times; unlike timers around stages it sees what runs outside
them (the garbage collection after a conversion, JAX's callback on it).

    samples = StackSamples()
    with samples:                # sampled throughout
        work()
    samples.report("transpiler.py:convert", rows=40)

The kernel's profiling timer ticks at its clock rate (every 4 ms of CPU time here,
whatever interval is asked for), so a stretch much shorter than that (a 2 ms
conversion) is sampled by keeping the timer running across the whole run and
counting only while the stretch runs:

    with samples.running():
        for ...:
            with samples:            # only this stretch is counted
                work()
            other_work()
"""

from __future__ import annotations

import collections
import contextlib
import signal


class StackSamples:
    """Counts of the functions on the stack at each CPU-time tick while switched on.

    Keys are ``"file.py:function"``. Only the main thread can take the samples
    (signals are delivered to it): switch it on there.
    """

    def __init__(self, interval: float = 0.0003):
        self.interval = interval
        self.inclusive = collections.Counter()
        self.own = collections.Counter()
        self._counting = False
        self._armed = False

    def _sample(self, signum, frame):
        if not self._counting:
            return
        seen = set()
        leaf = True
        while frame is not None:
            code = frame.f_code
            key = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"
            if leaf:
                self.own[key] += 1
                leaf = False
            if key not in seen:
                seen.add(key)
                self.inclusive[key] += 1
            frame = frame.f_back

    @contextlib.contextmanager
    def running(self):
        """The timer ticking (nothing counted but inside ``with self``)."""
        if self._armed:
            yield self
            return
        previous = signal.signal(signal.SIGPROF, self._sample)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)
        self._armed = True
        try:
            yield self
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0, 0)
            signal.signal(signal.SIGPROF, previous)
            self._armed = False

    def __enter__(self):
        self._running = self.running()
        self._running.__enter__()
        self._counting = True
        return self

    def __exit__(self, *exc):
        self._counting = False
        return self._running.__exit__(*exc)

    def report(self, root: str | None = None, rows: int = 40,
               title: str | None = None) -> dict:
        """Print each function's share of the samples, inclusive and self, as
        percentages of the samples with ``root`` on the stack (of all samples if
        None; ``title`` names it, ``root`` if None), the ``rows`` largest of each;
        return every share, ``{"inclusive": {function: percent}, "self": {...}}``."""
        total = (self.inclusive[root] if root is not None
                 else sum(self.own.values())) or 1
        title = title or root
        print(f"{total} samples" + (f" in {title}" if title else ""))
        shares = {}
        for title, counts in (("inclusive", self.inclusive), ("self", self.own)):
            print(f"-- {title} (% of the samples)")
            for key, count in counts.most_common(rows):
                print(f"{100 * count / total:6.1f}  {key}")
            shares[title] = {key: 100 * count / total for key, count in counts.items()}
        return shares
