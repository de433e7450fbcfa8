"""The typed result of a run: read-only parts, the same JSON, a readable repr, a DataFrame export."""
import builtins
import copy
import dataclasses

import pytest

from simnuma import load_topology, simulate
from simnuma.model.result import Bottleneck, LinkResult, MemoryResult, QueueResult, Result, ThreadResult


@pytest.fixture(scope="module")
def result():
    return simulate("quartet", ["0.0.r.1", "1.0.w.0"], ["2.0.r.2@1GB/s"], size_bytes=1 << 17)


def test_every_part_is_typed_and_says_what_the_json_says(result):
    data = result.to_dict()
    assert all(isinstance(t, ThreadResult) for t in result.threads)
    assert all(isinstance(x, LinkResult) for x in result.links)
    assert all(isinstance(x, MemoryResult) for x in result.memory)
    assert all(isinstance(x, QueueResult) for x in result.queues)
    assert isinstance(result.bottleneck, Bottleneck)
    for part in ("threads", "links", "memory", "queues"):
        typed = getattr(result, part)
        assert [x.to_dict() for x in typed] == data[part]
        for x, raw in zip(typed, data[part]):
            for key, value in raw.items():
                got = getattr(x, key)
                assert (got.to_dict() if hasattr(got, "to_dict") else got) == value, (part, key)
                assert x[key] == value
    assert result.thread("0.0.r.1").latency_ns.mean == data["threads"][0]["latency_ns"]["mean"]
    assert result.link(0, 1).capacity_GBps == 4.0
    assert result.bottleneck.resource == data["bottleneck"]["resource"]
    for name in Result._FIELDS:
        assert getattr(result, name) == data[name]


def test_a_part_answers_in_and_iterates_over_its_json_keys(result):
    """As a dict of the JSON would: ``"latency_ns" in thread`` (it tried the keys 0, 1, ... and raised KeyError: 0)."""
    thread = result.thread("0.0.r.1")
    assert "latency_ns" in thread and "spec" in thread and "nothing" not in thread and 0 not in thread
    assert list(thread) == list(thread.to_dict())
    assert "histogram" in thread.latency_ns and list(result.bottleneck) == list(result.to_dict()["bottleneck"])


def test_the_json_is_unchanged_by_the_typed_view(result):
    data = result.to_dict()
    again = Result(copy.deepcopy(data))
    assert again.to_dict() == data
    assert again.threads == result.threads and again.memory == result.memory


def test_a_fifo_memory_reports_no_dram_fields():
    fifo = load_topology("quartet").with_parameters({"defaults.memory.model": "fifo", "defaults.memory.bandwidth": "6.4 GB/s",
                                                     "defaults.memory.efficiency": 0.8})
    r = simulate(fifo, ["0.0.r.0"], size_bytes=1 << 16)
    (m, *_) = r.memory
    assert m.model == "fifo" and m.row_hits is None
    with pytest.raises(KeyError):
        m["row_hits"]


def test_a_result_and_its_parts_are_read_only(result):
    with pytest.raises(AttributeError, match="read-only"):
        result.seed = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.threads[0].time_ns = 0.0


def test_the_repr_names_the_board_mode_seed_finish_and_bottleneck(result):
    text = repr(result)
    assert text.startswith("<Result quartet steady seed 1: 2 foreground thread(s) finish at ")
    assert "% of 0.0.r.0" in text and f"bottleneck {result.bottleneck}" in text


def test_to_dataframe_has_a_row_per_entry_and_flat_columns(result):
    pandas = pytest.importorskip("pandas")
    frame = result.to_dataframe()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["spec"]) == [t.spec for t in result.threads]
    assert list(frame["latency_ns.mean"]) == [t.latency_ns.mean for t in result.threads]
    assert len(result.to_dataframe("links")) == len(result.links)
    with pytest.raises(ValueError, match="threads, links, memory, queues, waits"):
        result.to_dataframe("bottleneck")


def test_to_dataframe_gives_the_waits_in_long_form_not_a_column_per_pool(result):
    pytest.importorskip("pandas")
    queues = result.to_dataframe("queues")
    assert list(queues["name"]) == [q.name for q in result.queues]
    assert not [c for c in queues.columns if c.startswith("waits_on")]
    waits = result.to_dataframe("waits")
    assert list(waits.columns) == ["queue", "waits_on", "slots"]
    expected = [(q.name, awaited, slots) for q in result.queues for awaited, slots in q.waits_on.items()]
    assert expected, "the crossfire writers' buffers wait on one another"
    assert list(waits.itertuples(index=False, name=None)) == expected
    # a queue's waits by pool add up to its blocked slots
    for q in result.queues:
        assert waits[waits["queue"] == q.name]["slots"].sum() == pytest.approx(q.blocked, abs=1e-12)


def test_to_dataframe_without_pandas_says_how_to_get_it(result, monkeypatch):
    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_dataframe()


def test_among_buffers_full_all_the_time_the_bottleneck_is_the_one_before_the_busiest_block():
    from simnuma.model.bottleneck import bottleneck

    links = [{"src": 2, "dst": 0, "utilization": 0.456}]
    memory = [{"node": 0, "utilization": 0.481}]
    queues = [{"name": "link 2->0 probe cmd", "capacity": 4, "mean_occupancy": 4.0, "full_fraction": 1.0},
              {"name": "N0 mct->xbar probe", "capacity": 2, "mean_occupancy": 2.0, "full_fraction": 1.0 - 1e-9},
              # what waits for them (probes a miss waits for): without it, neither would hold a thread back
              {"name": "N2 mct->xbar probe", "capacity": 2, "mean_occupancy": 0.2, "full_fraction": 0.0,
               "waits_on": {"link 2->0 probe cmd": 0.1}},
              {"name": "N0 mct dram queue", "capacity": 16, "mean_occupancy": 0.2, "full_fraction": 0.0,
               "waits_on": {"N0 mct->xbar probe": 0.6, "link 2->0 probe cmd": 0.5}}]
    b = bottleneck(links, memory, queues)
    assert (b["resource"], b["buffer"], b["limit"]) == ("memory N0", "N0 mct->xbar probe", "full buffer")
    memory[0]["utilization"] = 0.40      # now the link is the busier block in front of an equally full buffer
    assert bottleneck(links, memory, queues)["buffer"] == "link 2->0 probe cmd"
    queues[1]["full_fraction"] = 0.9     # clearly less full: the fullest buffer decides
    memory[0]["utilization"] = 0.481
    assert bottleneck(links, memory, queues)["buffer"] == "link 2->0 probe cmd"


def _queue(name, full, capacity=2, waits_on=None):
    occupancy = capacity * full
    return {"name": name, "capacity": capacity, "mean_occupancy": occupancy, "full_fraction": full,
            "blocked": sum((waits_on or {}).values()), "waits_on": waits_on or {}}


def test_the_bottleneck_is_the_end_of_a_chain_of_buffers_waiting_on_the_next():
    from simnuma.model.bottleneck import bottleneck

    links = [{"src": 0, "dst": 1, "utilization": 0.75}]
    memory = [{"node": 0, "utilization": 0.48}]
    queues = [_queue("N0 mct->xbar probe", 1.0, waits_on={"link 0->1 probe cmd": 1.5}),
              _queue("link 0->1 probe cmd", 1.0, waits_on={"N1 xbar->sri probe": 1.2}),
              _queue("N1 xbar->sri probe", 1.0)]
    b = bottleneck(links, memory, queues)
    assert (b["resource"], b["kind"], b["buffer"]) == ("probes N1", "probes", "N1 xbar->sri probe")
    assert b["utilization"] == 1.0   # a node's probe lookups: the share of its slots in use
    assert b["chain"] == ["N0 mct->xbar probe", "link 0->1 probe cmd", "N1 xbar->sri probe"]
    # the probe queue drains; the link's slots wait less than half their time on it: held by their own credit loop
    queues[1]["waits_on"] = {"N1 xbar->sri probe": 0.9}
    queues[2].update(full_fraction=0.6, mean_occupancy=1.2)
    assert bottleneck(links, memory, queues)["buffer"] == "link 0->1 probe cmd"
    queues[1]["waits_on"] = {"N1 xbar->sri probe": 1.1}   # ... more than half: it is what the link's buffer waits on
    assert bottleneck(links, memory, queues)["buffer"] == "N1 xbar->sri probe"


def test_a_chain_follows_what_the_buffers_waited_on_not_every_route():
    """A buffer full all the time while the next one is full a little less (its own time full includes the
    credit's way back) is still backed up from it when its packets wait on it; a full buffer its packets never
    waited on is not followed."""
    from simnuma.model.bottleneck import bottleneck

    links = [{"src": 0, "dst": 1, "utilization": 0.12}, {"src": 1, "dst": 0, "utilization": 0.40}]
    memory = [{"node": 1, "utilization": 0.17}]
    queues = [_queue("link 0->1 request cmd", 1.0, capacity=1, waits_on={"N1 mct dram queue": 0.59}),
              _queue("N1 mct dram queue", 0.97),
              _queue("N0 sri->xbar request", 0.8, waits_on={"link 0->1 request cmd": 1.2})]
    b = bottleneck(links, memory, queues)
    assert (b["resource"], b["buffer"]) == ("memory N1", "N1 mct dram queue")
    assert b["chain"] == ["N0 sri->xbar request", "link 0->1 request cmd", "N1 mct dram queue"]
    queues[0]["waits_on"] = {}   # nothing waited on the queue: the link's buffer is where the chain ends
    assert bottleneck(links, memory, queues)["buffer"] == "link 0->1 request cmd"


def test_a_full_buffer_that_holds_no_thread_back_is_no_bottleneck():
    """An idle remote reader's one request buffer is full while its credit travels (64% of the time on the
    Quartet), with next to nothing waiting for it: one more buffer gains 0.1%.  Victims (posted writes) queued
    for a link's posted buffer delay no miss while the cores can still put theirs in."""
    from simnuma.model.bottleneck import bottleneck

    links = [{"src": 0, "dst": 1, "utilization": 0.17}, {"src": 1, "dst": 0, "utilization": 0.59}]
    memory = [{"node": 1, "utilization": 0.5}]
    queues = [_queue("link 0->1 request cmd", 0.64, capacity=1),
              _queue("N0 sri->xbar request", 0.0, waits_on={"link 0->1 request cmd": 0.013})]
    b = bottleneck(links, memory, queues)
    assert (b["limit"], b["resource"]) == ("none", "link 1->0")
    queues[1]["waits_on"] = {"link 0->1 request cmd": 0.6}     # requests queue for it: it holds the reader back
    assert bottleneck(links, memory, queues)["buffer"] == "link 0->1 request cmd"
    victims = [_queue("link 0->1 posted cmd", 0.87, capacity=1),
               _queue("N0 sri->xbar posted", 0.012, capacity=3, waits_on={"link 0->1 posted cmd": 0.68})]
    assert bottleneck(links, memory, victims)["limit"] == "none"
    victims[1].update(full_fraction=0.82, mean_occupancy=2.7, waits_on={"link 0->1 posted cmd": 2.5})   # ... until
    # they back up to the core
    b = bottleneck(links, memory, victims)
    assert b["buffer"] == "link 0->1 posted cmd" and b["chain"] == ["N0 sri->xbar posted", "link 0->1 posted cmd"]


def test_a_cycle_of_waiting_buffers_ends_where_it_closes():
    from simnuma.model.bottleneck import bottleneck, chain

    queues = [_queue("N0 mct->xbar probe", 1.0, waits_on={"link 0->1 probe cmd": 1.5}),
              _queue("link 0->1 probe cmd", 1.0, waits_on={"N1 xbar->sri probe": 1.5}),
              _queue("N1 xbar->sri probe", 1.0, waits_on={"N0 mct->xbar probe": 1.5})]
    rows = {q["name"]: q for q in queues}
    assert chain("N0 mct->xbar probe", rows)[-1] == "N1 xbar->sri probe"
    assert chain("link 0->1 probe cmd", rows)[-1] == "N0 mct->xbar probe"
    b = bottleneck([{"src": 0, "dst": 1, "utilization": 0.75}], [{"node": 0, "utilization": 0.48}], queues)
    # every one is an end: the one in front of the busiest block, the probe lookups with every slot in use
    assert b["buffer"] == "N1 xbar->sri probe"


def test_buffer_feeds_follow_the_routes_and_the_packet_flows():
    from simnuma.model.feeds import buffer_feeds
    from simnuma.model.system import System
    from simnuma.topology import load_topology
    from simnuma.workload import Workload

    system = System(load_topology("quartet"), Workload.build(["0.0.r.0"], []), 4096, 1)
    feeds = buffer_feeds(system)
    names = {p.name for p in system.pools}
    assert set(feeds) == names and all(set(targets) <= names for targets in feeds.values())
    assert feeds["N0 mct->xbar probe"] == ("link 0->1 probe cmd", "link 0->2 probe cmd")
    assert feeds["N0 mct dram queue"] == ("N0 mct->xbar response",)
    assert set(feeds["link 0->1 probe cmd"]) == {"N1 xbar->sri probe", "link 1->3 probe cmd"}   # 0->3 goes via 1
    assert "N1 mct dram queue" in feeds["link 0->1 request cmd"]
    assert feeds["N0 xbar->sri probe"] == ()     # a probe holds its slot for the lookup only
    assert not any(t.startswith("link") and "data" in t for t in feeds["N0 sri->xbar response"])


def test_a_run_follows_a_link_buffer_to_the_dram_queue_it_waits_on():
    """With two DRAM queue entries held until source-done, one reader of node 1's memory keeps the queue full;
    the link's request buffer in front of it is fuller still (its time full includes the credit's way back),
    so a chain taken from fullness alone stopped there; its slots' measured waits lead on to the memory."""
    from simnuma.model import simulate
    from simnuma.topology import load_topology

    board = load_topology("quartet").with_parameters({"defaults.memory.queue": 2, "defaults.memory.release": "done"})
    r = simulate(board, ["0.0.r.1"], [], size_bytes=2**18, mode="exact", baseline=False)
    queues = {q.name: q for q in r.queues}
    link, dram = queues["link 0->1 request cmd"], queues["N1 mct dram queue"]
    assert link.full_fraction > dram.full_fraction > 0.9
    assert link.waits_on["N1 mct dram queue"] > 0.5 * link.mean_occupancy
    assert (r.bottleneck.resource, r.bottleneck.buffer) == ("memory N1", "N1 mct dram queue")
    assert r.bottleneck.chain[-2:] == ["link 0->1 request cmd", "N1 mct dram queue"]
    assert len(set(r.queues)) == len(r.queues) and hash(r.bottleneck)   # the parts stay hashable, dicts and all


def test_a_broadcast_buffer_waiting_on_several_links_is_backed_up_from_them():
    """An MCT's probe buffer sends a broadcast's copies over up to three links: its slots' waits split among them,
    none over half of their held time, while together they are most of it; it is backed up, not an end (on the
    X6440 under full load the memory behind it, 57% busy, was named)."""
    from simnuma.model.bottleneck import bottleneck

    links = [{"src": 2, "dst": 1, "utilization": 0.39}]
    memory = [{"node": 2, "utilization": 0.57}]
    queues = [_queue("N2 mct->xbar probe", 1.0, waits_on={"link 2->0 probe cmd": 0.49, "link 2->1 probe cmd": 0.67,
                                                           "link 2->3 probe cmd": 0.49}),
              _queue("link 2->1 probe cmd", 1.0, capacity=4)]
    b = bottleneck(links, memory, queues)
    assert (b["resource"], b["buffer"]) == ("link 2->1", "link 2->1 probe cmd")


def test_what_a_run_waits_on_is_what_its_packets_hold():
    """A read's DRAM queue entry waits on an MCT response buffer for its data (one response buffer per MCT and
    link); a probe in a link's buffer waits on the probe slots of the node it is for (full very-high load)."""
    from simnuma.case import parse_case
    from simnuma.model import simulate
    from simnuma.topology import load_topology

    quartet = load_topology("quartet")
    tight = quartet.with_parameters({"defaults.mct.buffers.response": 1, "link_defaults.buffers.response": 1})
    r = simulate(tight, ["0.0.r.1", "0.1.r.1"], [], size_bytes=2**18, mode="exact", baseline=False)
    dram = {q.name: q for q in r.queues}["N1 mct dram queue"]
    assert dram.waits_on["N1 mct->xbar response"] > 0.01
    background = parse_case("0.0.w.1 1.0.w.3 + full@very-high").background_on(quartet)
    r = simulate(quartet, ["0.0.w.1", "1.0.w.3"], background, size_bytes=2**16, mode="exact", baseline=False)
    probes = {q.name: q for q in r.queues}["link 1->3 probe cmd"]
    assert probes.waits_on["N3 xbar->sri probe"] > 0.2 * probes.mean_occupancy
