"""SimPy's internals are used in one module (events.py), against the SimPy versions pyproject pins."""
import re
try:
    import tomllib
except ModuleNotFoundError:   # Python 3.10
    import tomli as tomllib
from pathlib import Path

import pytest
import simpy

from simnuma.model.events import Environment

ROOT = Path(__file__).resolve().parents[2]
INTERNALS = re.compile(r"\._now\b|\._queue\b|\._eid\b|\b_ok\b|\._value\b")


def test_only_events_py_touches_simpy_internals():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "simnuma").rglob("*.py")
                 if p.name != "events.py" and INTERNALS.search(p.read_text(encoding="utf-8"))]
    assert not offenders, offenders


def test_the_installed_simpy_is_in_the_pinned_range():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (pin,) = [d for d in deps if d.startswith("simpy")]
    assert pin.startswith("simpy>=4.1,<4.2")
    major, minor = (int(x) for x in simpy.__version__.split(".")[:2])
    assert (major, minor) == (4, 1)


def _story(env):
    """Processes, timeouts, a run until an event, until a time, and a failure: what happened, and when."""
    log = []

    def worker(name, delay):
        for k in range(3):
            yield env.timeout(delay)
            log.append((env.now, name, k))
        return name

    a = env.process(worker("a", 1.5))
    env.process(worker("b", 2.0))
    log.append(("until a", env.run(until=a), env.now))
    env.run(until=5.0)
    log.append(("until 5", env.now))

    def failing():
        yield env.timeout(1)
        raise ValueError("boom")

    env.process(failing())
    with pytest.raises(ValueError, match="boom"):
        env.run()
    log.append(("failed at", env.now))
    return log


def test_our_step_behaves_as_simpys():
    assert _story(Environment()) == _story(simpy.Environment())


def test_now_ns_follows_the_clock():
    env = Environment()
    seen = []

    def watch():
        for delay in (0.5, 2.25, 7.0):
            yield env.timeout(delay)
            seen.append((env.now_ns, env.now))

    env.process(watch())
    env.run()
    assert seen == [(0.5, 0.5), (2.75, 2.75), (9.75, 9.75)]


def _stepped(env):
    """Single steps, a run, single steps again: the time and what ran after each."""
    seen, log = [], []
    for delay in (1.0, 2.0, 3.0):
        env.timeout(delay).callbacks.append(lambda event, d=delay: seen.append(d))
    env.step()
    log.append((env.now, list(seen)))
    env.run(until=2.5)
    log.append((env.now, list(seen)))
    while True:
        try:
            env.step()
        except simpy.core.EmptySchedule:
            break
        log.append((env.now, list(seen)))
    return log


def test_step_outside_run_is_one_event_as_simpys():
    """``run`` steps with the clock's loop; ``step`` by itself still processes one event, as SimPy's."""
    env = Environment()
    assert _stepped(env) == _stepped(simpy.Environment())
    assert env.now == env.now_ns == env.clock.now_ns == 3.0


def test_a_packet_on_the_heap_with_nothing_to_call_is_a_mistake_said_so():
    """The model's own events carry what to call while they are on the heap; one that does not is a
    bookkeeping mistake, raised, not silently dropped."""
    from simnuma.model.packet import Packet

    env = Environment()
    env.schedule(Packet("probe", None, 0, 1, ()))
    with pytest.raises(RuntimeError, match="a packet came off the event heap with nothing to call"):
        env.run()
