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
    with pytest.raises(ValueError, match="threads, links, memory, queues"):
        result.to_dataframe("bottleneck")


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
    from simnuma.model.result import bottleneck

    links = [{"src": 2, "dst": 0, "utilization": 0.456}]
    memory = [{"node": 0, "utilization": 0.481}]
    queues = [{"name": "link 2->0 probe cmd", "capacity": 4, "mean_occupancy": 4.0, "full_fraction": 1.0},
              {"name": "N0 mct->xbar probe", "capacity": 2, "mean_occupancy": 2.0, "full_fraction": 1.0 - 1e-9}]
    b = bottleneck(links, memory, queues)
    assert (b["resource"], b["buffer"], b["limit"]) == ("memory N0", "N0 mct->xbar probe", "full buffer")
    memory[0]["utilization"] = 0.40      # now the link is the busier block in front of an equally full buffer
    assert bottleneck(links, memory, queues)["buffer"] == "link 2->0 probe cmd"
    queues[1]["full_fraction"] = 0.9     # clearly less full: the fullest buffer decides
    memory[0]["utilization"] = 0.481
    assert bottleneck(links, memory, queues)["buffer"] == "link 2->0 probe cmd"


def test_the_bottleneck_is_the_end_of_a_chain_of_full_buffers():
    from simnuma.model.result import bottleneck

    links = [{"src": 0, "dst": 1, "utilization": 0.75}]
    memory = [{"node": 0, "utilization": 0.48}]

    def queue(name, full):
        return {"name": name, "capacity": 2, "mean_occupancy": 2.0 * full, "full_fraction": full}

    queues = [queue("N0 mct->xbar probe", 1.0), queue("link 0->1 probe cmd", 1.0), queue("N1 xbar->sri probe", 1.0)]
    feeds = {"N0 mct->xbar probe": ("link 0->1 probe cmd",), "link 0->1 probe cmd": ("N1 xbar->sri probe",),
             "N1 xbar->sri probe": ()}
    b = bottleneck(links, memory, queues, feeds)
    assert (b["resource"], b["kind"], b["buffer"]) == ("probes N1", "probes", "N1 xbar->sri probe")
    queues[2]["full_fraction"] = 0.6        # the probe queue drains: the link's buffer waits on something else
    assert bottleneck(links, memory, queues, feeds)["buffer"] == "link 0->1 probe cmd"
    feeds["N1 xbar->sri probe"] = ("N0 mct->xbar probe",)   # a cycle of full buffers: all are candidates
    queues[2]["full_fraction"] = 1.0
    assert bottleneck(links, memory, queues, feeds)["buffer"] == "link 0->1 probe cmd"   # the busiest block's


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
