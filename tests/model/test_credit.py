"""A buffer pool's occupancy, accounted exactly, against a slot-by-slot reference."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from simnuma.model.credit import CreditPool
from simnuma.model.events import Environment


def _reference(capacity: int, ops: list, end: float) -> tuple[float, float]:
    """``(slot-ns held, ns full)`` over [0, end]: the free slots' ready times replayed op by op.

    Between two operations the set of ready times is fixed, and a slot is
    free from its ready time on: occupancy is piecewise constant with steps
    at those ready times, integrated exactly.
    """
    ready = [0.0] * capacity
    held = full = 0.0
    times = [t for t, _, _ in ops] + [end]
    for k, t_next in enumerate(times):
        t_prev = 0.0 if k == 0 else times[k - 1]
        if k > 0:
            _, kind, value = ops[k - 1]
            if kind == "take":
                ready.remove(min(ready))
            else:
                ready.append(value)
        steps = sorted(r for r in ready if r < t_next)
        u, free = t_prev, sum(1 for r in steps if r <= t_prev)
        for r in (r for r in steps if r > t_prev):
            held += (capacity - free) * (r - u)
            full += (r - u) if free == 0 else 0.0
            u, free = r, free + 1
        held += (capacity - free) * (t_next - u)
        full += (t_next - u) if free == 0 else 0.0
    return held, full


@st.composite
def _schedules(draw):
    capacity = draw(st.integers(1, 4))
    n = draw(st.integers(0, 30))
    ops, now, ready, taken = [], 0.0, [0.0] * capacity, 0
    for _ in range(n):
        now += draw(st.sampled_from([0.0, 0.5, 1.0, 2.5, 7.0]))
        if ready and (taken == 0 or draw(st.booleans())):
            ready.remove(min(ready))
            taken += 1
            ops.append((now, "take", None))
        elif taken:
            when = now + draw(st.sampled_from([0.0, 1.0, 3.0, 10.0]))   # a credit may come back later
            ready.append(when)
            taken -= 1
            ops.append((now, "release", when))
    end = now + draw(st.sampled_from([0.0, 1.0, 20.0]))
    return capacity, ops, end


@settings(max_examples=300, deadline=None)
@given(_schedules())
def test_exact_occupancy_matches_a_slot_by_slot_reference(schedule):
    capacity, ops, end = schedule
    env = Environment()
    pool = CreditPool(env, capacity, "pool")
    for t, kind, value in ops:
        env.clock.now_ns = t
        if kind == "take":
            pool.request(lambda _arg: None, None)   # a slot ready now, or (all taken) the next to come back
        else:
            pool.release(value)
    env.clock.now_ns = end
    held, full = pool.occupancy_ns(end)
    want_held, want_full = _reference(capacity, ops, end)
    assert abs(held - want_held) <= 1e-9 * max(1.0, want_held)
    assert abs(full - want_full) <= 1e-9 * max(1.0, want_full)
    assert 0.0 <= full <= end and 0.0 <= held <= capacity * end + 1e-9


def test_a_credit_in_flight_keeps_its_slot_occupied_until_it_is_back():
    env = Environment()
    pool = CreditPool(env, 1, "one")
    pool.request(lambda _arg: None, None)        # taken at 0
    env.clock.now_ns = 2.0
    pool.release(10.0)                           # freed at 2, usable again at 10 (a credit on its way back)
    assert pool.occupancy_ns(6.0) == (6.0, 6.0)  # held and full all along
    assert pool.occupancy_ns(14.0) == (10.0, 10.0)


def test_a_waiting_holder_counts_its_wait_once_on_every_pool_it_holds():
    """Each grant of a waiting request (a slot freed, a credit given back, a slot coming back later) adds the
    wait, once, to the pools the party holds meanwhile; the copies of a broadcast add the time any of them
    waited to the one buffer they share."""
    from simnuma.model.mct import _BroadcastHold

    env = Environment()
    nxt = CreditPool(env, 1, "next")
    cmd, data, probe = CreditPool(env, 2, "cmd"), CreditPool(env, 2, "data"), CreditPool(env, 1, "probe")
    granted = []
    nxt.request(granted.append, "a")                  # taken at 0, no wait
    env.clock.now_ns = 1.0
    nxt.request(granted.append, "b", cmd, data)       # waits from 1 ...
    env.clock.now_ns = 3.0
    nxt.release(5.0)                                  # ... to 5: 4 ns on both pools it holds
    assert cmd.waited() == {"next": 4.0} and data.waited() == {"next": 4.0}
    env.clock.now_ns = 6.0
    nxt.release(9.0)                                  # free from 9, nobody waiting
    nxt.request(granted.append, "c", cmd)             # the slot coming back at 9 goes on to it: 3 ns
    assert cmd.waited() == {"next": 7.0}
    hold = _BroadcastHold(probe, 3)                   # a broadcast's three copies share one probe buffer
    env.clock.now_ns = 10.0
    other = CreditPool(env, 1, "other")
    other.request(granted.append, "x")
    nxt.request(granted.append, "d", hold)            # two of them wait from 10 ...
    other.request(granted.append, "e", hold)
    env.clock.now_ns = 12.0
    nxt.give_back(13.0)                               # ... one to 13 (for next),
    other.give_back(14.0)                             # ... the other to 14 (for other)
    assert probe.waited() == {} and not nxt.waiters      # counted once the buffer is free:
    hold.release(13.0)
    hold.release(14.0)
    hold.release(14.0)
    assert probe.waited() == {"other": 4.0} and hold.account is probe   # blocked 4 ns, not 7, by the last to leave
    hold = _BroadcastHold(probe, 2)                   # the copies of another broadcast wait one after the other
    env.clock.now_ns = 20.0
    nxt.request(granted.append, "f", hold)
    env.clock.now_ns = 21.0
    nxt.give_back(22.0)                               # 20 to 22 ...
    hold.release(22.0)
    env.clock.now_ns = 23.0
    other.request(granted.append, "g", hold)
    other.give_back(25.0)                             # ... and 23 to 25
    hold.release(25.0)
    assert probe.waited() == {"other": 6.0, "next": 2.0}
