"""How the analytic model's solver (``solver.py``) damps its two loops near a steep loaded-latency curve.

Both can swing between two answers for ever: the iterations between a light load (a short latency, so the threads
ask more) and a heavy one; the rounds between two limits taking turns (a DRAM queue overfull at one cap, the memory
it feeds with room at the next).  A curve's wait therefore moves half the way to where the load puts it each
iteration, and half as much again each time it turns back (``Network._iterate``); a cap moves all the way until
it has turned back twice running, then half as much again at each turn (:func:`damped_caps`).  The fixed point
lies between the two answers, and the halved steps close in on it as a bisection does, instead of reporting
whichever of the two the last round happened to end on.  A loop that converges without swinging is not touched.
"""
from __future__ import annotations

from typing import Final

__all__ = ["LEAST_GAIN", "damped_caps"]

LEAST_GAIN: Final = 1.0 / 1024   # a damped step goes at least this share of the way


def damped_caps(caps: dict[str, float], targets: dict[str, float], gains: dict[str, tuple[float, float, bool]]
                ) -> dict[str, float]:
    """The next round's caps: each class's cap moves towards its ``targets`` (``Network._caps``) by the share of the
    way (in ratio) that ``gains`` keeps for it: all of it, until its moves have turned back twice running (it swings
    between two rounds), then half as much again at each turn.  Two limits taking turns (a DRAM queue overfull at
    one cap, the memory it feeds with room at the next, on a steep loaded-latency curve) would otherwise send a cap
    back and forth for ever; its fixed point lies between the two, and the halved steps close in on it as a
    bisection does.  ``gains``: per class, (share of the way, direction of its last move, whether that move
    turned back), kept from round to round."""
    out: dict[str, float] = {}
    for label, target in targets.items():
        old = caps.get(label)
        if old is None or old <= 0.0 or target <= 0.0 or target == old:
            out[label] = target
            continue
        direction = 1.0 if target > old else -1.0
        gain, last, turned = gains.get(label, (1.0, 0.0, False))
        turns = last != 0.0 and direction != last
        if turns and turned:
            gain = max(LEAST_GAIN, 0.5 * gain)
        gains[label] = (gain, direction, turns)
        out[label] = target if gain == 1.0 else old * (target / old) ** gain
    return out
