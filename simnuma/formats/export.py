"""A board and its matrices in the formats other tools read (``simnuma export FORMAT BOARD``).

* ``slit``: the ACPI System Locality Information Table as text: distance 10 for a node's own memory
  and, for memory on node j, 10 x (idle latency from i to j) / (idle latency from i to i), rounded
  half up as firmware writes it, at least 11 for another node (ACPI reserves 0-9) and at most 254
  (255 means unreachable);
* ``acpi``: the same table as ACPI source for ``iasl`` (its data-table compiler: ``iasl slit.dsl``
  makes ``slit.aml``, which a firmware or ``qemu -acpitable file=slit.aml`` loads);
* ``numactl``: what ``numactl --hardware`` prints on such a machine (CPUs numbered node by node);
* ``qemu``: options that give a virtual machine the board's NUMA layout: a memory backend and a
  ``-numa node`` per node, a socket per node (per CPU where nodes have unequal cores: QEMU's
  sockets are alike) placed by ``-numa cpu``, ``-numa dist`` for every pair, and the HMAT's
  ``-numa hmat-lb`` access latency (ns) and bandwidth (of every core of a node reading, in MB/s,
  in QEMU's 16-bit entries) with ``-machine hmat=on``;
* ``hwloc``: hwloc's v2 XML (Machine, a Package per node with its NUMANode, Cores and PUs), the
  SLIT as the ``NUMALatency`` distances matrix, and the memory attributes ``Latency`` (ns) and
  ``Bandwidth`` (MiB/s) of each node from each node's CPUs: ``lstopo --input board.xml`` shows it,
  ``hwloc-annotate``/``lstopo --memattrs`` list the attributes.
"""
from __future__ import annotations

import math
import re
from xml.sax.saxutils import quoteattr

from ..bench.cpulists import format_cpulist

__all__ = ["EXPORTS", "slit_distances", "export"]

EXPORTS = ("slit", "acpi", "numactl", "qemu", "hwloc")


def slit_distances(m) -> list:
    """The SLIT of matrices ``m`` (see the module), a row and a column per node.  A memory-only node's row, which
    no thread measures, mirrors its column (a firmware's table is symmetric there), and between two memory-only
    nodes the distance is the larger of their farthest (nothing crosses from one to the other)."""
    at = {nid: k for k, nid in enumerate(m.nodes)}
    measured: dict = {}
    for i, row in zip(m.rows, m.latency_ns):
        local = row[at[i]]
        for j, lat in zip(m.nodes, row):
            measured[(i, j)] = 10 if i == j else max(11, min(254, math.floor(10.0 * lat / local + 0.5)))
    out = []
    for i in m.nodes:
        line = []
        for j in m.nodes:
            if (i, j) in measured:
                line.append(measured[(i, j)])
            elif i == j:
                line.append(10)
            elif (j, i) in measured:
                line.append(measured[(j, i)])
            else:
                line.append(max(measured[(k, x)] for k in m.rows for x in (i, j)))
        out.append(line)
    return out


def _slit_text(topology, m) -> str:
    dist = slit_distances(m)
    width = max(3, len(str(max(topology.node_ids))) + 1)
    lines = [f"# SLIT of {m.board} ({m.board_hash}) from simnuma {m.version}: 10 x idle latency / local latency",
             "node " + "".join(f"{j:>{width + 1}}" for j in m.nodes)]
    lines += [f"{i:>4} " + "".join(f"{d:>{width + 1}}" for d in row) for i, row in zip(m.nodes, dist)]
    return "\n".join(lines) + "\n"


def _acpi_text(topology, m) -> str:
    dist = slit_distances(m)
    n = len(dist)
    # iasl reads ASCII only, and an OEM Table ID of 8 printable characters: the name's ASCII letters and digits
    plain = re.sub(r"[^A-Za-z0-9]", "", m.board)
    oem_table = (plain.upper()[:8] or "SIMNUMA").ljust(8)
    named = re.sub(r"[^ -~]|\*/", "?", m.board)
    lines = [f"/* SLIT of board {named} ({m.board_hash}), simnuma {m.version}: compile with iasl */",
             '[0004]                          Signature : "SLIT"    [System Locality Information Table]',
             f"[0004]                       Table Length : {44 + n * n:08X}",
             "[0001]                           Revision : 01",
             "[0001]                           Checksum : 00",
             '[0006]                             Oem ID : "SIMNUM"',
             f'[0008]                       Oem Table ID : "{oem_table}"',
             "[0004]                       Oem Revision : 00000001",
             '[0004]                    Asl Compiler ID : "INTL"',
             "[0004]              Asl Compiler Revision : 00000000",
             "",
             f"[0008]                         Localities : {n:016X}"]
    for i, row in enumerate(dist):
        lines.append(f"[{n:04X}]                       Locality {i:3d} : " + " ".join(f"{d:02X}" for d in row))
    return "\n".join(lines) + "\n"


def _cpus(topology) -> dict:
    """Node id -> the CPU numbers of its cores, numbered node by node."""
    out, cpu = {}, 0
    for nid in topology.node_ids:
        cores = topology.node(nid).cores
        out[nid] = list(range(cpu, cpu + cores))
        cpu += cores
    return out


def _numactl_text(topology, m, memory_mb: int) -> str:
    cpus = _cpus(topology)
    ids = list(topology.node_ids)
    lines = [f"available: {len(ids)} nodes ({format_cpulist(ids)})"]   # numactl lists ids as it lists CPUs
    for nid in ids:
        lines += [f"node {nid} cpus:" + "".join(f" {c}" for c in cpus[nid]), f"node {nid} size: {memory_mb} MB",
                  f"node {nid} free: {memory_mb} MB"]
    lines.append("node distances:")
    lines.append("node " + "".join(f"{j:>4}" for j in ids))
    for nid, row in zip(ids, slit_distances(m)):
        lines.append(f"{nid:>3}: " + "".join(f"{d:>4}" for d in row))
    return "\n".join(lines) + "\n"


# QEMU keeps an HMAT bandwidth table as one base unit and 16-bit entries, and refuses values whose bits span more
HMAT_ENTRY_MAX = 0xFFFE


def _hmat_bandwidths_MBps(values) -> tuple:
    """``(rows, step)``: bandwidths (GB/s) as whole MB/s, each a multiple of ``step`` = 2^k MB/s with the
    smallest k that keeps the largest within QEMU's 16-bit entries (k = 0 up to 65.5 GB/s)."""
    exact = [[max(1.0, v * 1000.0) for v in row] for row in values]
    most = max(v for row in exact for v in row)
    step = 1
    while round(most / step) > HMAT_ENTRY_MAX:
        step *= 2
    return [[max(1, round(v / step)) * step for v in row] for row in exact], step


def _qemu_text(topology, m, memory_mb: int) -> str:
    ids = list(topology.node_ids)
    k_of = {nid: k for k, nid in enumerate(ids)}
    cores = [topology.node(nid).cores for nid in ids]
    cpus = sum(cores)
    even = len(set(cores)) == 1
    # QEMU's sockets all have one core count: unequal nodes (memory-only ones included) get a socket per CPU,
    # each placed on its node
    smp = f"sockets={len(ids)},cores={cores[0]}" if even else f"sockets={cpus},cores=1"
    opts = [f"# NUMA layout of board {m.board} ({m.board_hash}), simnuma {m.version}",
            f"-machine q35,hmat=on -smp {cpus},{smp},threads=1 -m {memory_mb * len(ids)}M"]
    if ids != list(range(len(ids))):
        opts.insert(1, "# QEMU's nodes 0.." + str(len(ids) - 1) + " are the board's nodes "
                    + ", ".join(map(str, ids)) + ", in that order")
    for k, nid in enumerate(ids):
        # a memory-only node's initiator is the nearest node with CPUs (QEMU's HMAT needs one for every node)
        initiator = k if cores[k] else k_of[_nearest_initiator(m, nid)]
        opts.append(f"-object memory-backend-ram,id=mem{k},size={memory_mb}M")
        opts.append(f"-numa node,nodeid={k},memdev=mem{k},initiator={initiator}")
    for k, nid in enumerate(ids):
        sockets = [k] if even else _cpus(topology)[nid]
        opts.extend(f"-numa cpu,node-id={k},socket-id={socket}" for socket in sockets)
    dist = slit_distances(m)
    for a in range(len(ids)):
        for b in range(len(ids)):
            if a != b:
                opts.append(f"-numa dist,src={a},dst={b},val={dist[a][b]}")
    bandwidth, step = _hmat_bandwidths_MBps(m.node_bandwidth_GBps)
    if step > 1:
        opts.insert(1, f"# HMAT bandwidths rounded to multiples of {step} MB/s: QEMU's table holds 16 bits an entry")
    for r, src in enumerate(m.rows):          # the initiators: nodes with CPUs
        a = k_of[src]
        for b in range(len(ids)):
            lat = max(1, round(m.latency_ns[r][b]))
            opts.append(f"-numa hmat-lb,initiator={a},target={b},hierarchy=memory,data-type=access-latency,"
                        f"latency={lat}")
            opts.append(f"-numa hmat-lb,initiator={a},target={b},hierarchy=memory,data-type=access-bandwidth,"
                        f"bandwidth={bandwidth[r][b]}M")
    return "\n".join(opts) + "\n"


def _nearest_initiator(m, nid: int) -> int:
    """The node with CPUs whose idle latency to ``nid``'s memory is the least (the lowest id of those as near)."""
    j = list(m.nodes).index(nid)
    return min(zip(m.rows, m.latency_ns), key=lambda rl: (rl[1][j], rl[0]))[0]


def _hwloc_bitmap(bits) -> str:
    """hwloc's text of a set of CPU or node numbers: 32-bit words in hex, the most significant first, separated by
    commas (``0x00000001,0xffffffff`` for 0-32)."""
    value = sum(1 << b for b in bits)
    words = [f"0x{value & 0xFFFFFFFF:08x}"]
    while value >> 32:
        value >>= 32
        words.append(f"0x{value & 0xFFFFFFFF:08x}")
    return ",".join(reversed(words))


def _hwloc_xml(topology, m, memory_mb: int) -> str:
    cpus = _cpus(topology)
    ids = list(topology.node_ids)
    total = sum(len(c) for c in cpus.values())

    all_cpus = _hwloc_bitmap(range(total))
    all_nodes = _hwloc_bitmap(ids)
    gp = iter(range(1, 1_000_000))
    machine_gp = next(gp)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
             '<topology version="2.0">',
             f'  <object type="Machine" os_index="0" cpuset="{all_cpus}" complete_cpuset="{all_cpus}"'
             f' allowed_cpuset="{all_cpus}" nodeset="{all_nodes}" complete_nodeset="{all_nodes}"'
             f' allowed_nodeset="{all_nodes}" gp_index="{machine_gp}">',
             '    <info name="Backend" value="simnuma"/>',
             f'    <info name="simnumaBoard" value={quoteattr(f"{m.board} ({m.board_hash})")}/>',
             f'    <info name="simnumaVersion" value={quoteattr(m.version)}/>']
    node_gp = {}
    for nid in ids:     # a memory-only node: the Machine's memory, near every CPU (hwloc lists memory first)
        if not cpus[nid]:
            ns = _hwloc_bitmap([nid])
            node_gp[nid] = next(gp)
            lines.append(f'    <object type="NUMANode" os_index="{nid}" cpuset="{all_cpus}" complete_cpuset="{all_cpus}"'
                         f' nodeset="{ns}" complete_nodeset="{ns}" gp_index="{node_gp[nid]}"'
                         f' local_memory="{memory_mb * 2**20}"/>')
    for k, nid in enumerate(n for n in ids if cpus[n]):
        cs = _hwloc_bitmap(cpus[nid])
        ns = _hwloc_bitmap([nid])
        lines.append(f'    <object type="Package" os_index="{k}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}"'
                     f' complete_nodeset="{ns}" gp_index="{next(gp)}">')
        node_gp[nid] = next(gp)
        lines.append(f'      <object type="NUMANode" os_index="{nid}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}"'
                     f' complete_nodeset="{ns}" gp_index="{node_gp[nid]}" local_memory="{memory_mb * 2**20}"/>')
        for cpu in cpus[nid]:
            c = _hwloc_bitmap([cpu])
            lines.append(f'      <object type="Core" os_index="{cpu}" cpuset="{c}" complete_cpuset="{c}" nodeset="{ns}"'
                         f' complete_nodeset="{ns}" gp_index="{next(gp)}">')
            lines.append(f'        <object type="PU" os_index="{cpu}" cpuset="{c}" complete_cpuset="{c}" nodeset="{ns}"'
                         f' complete_nodeset="{ns}" gp_index="{next(gp)}"/>')
            lines.append("      </object>")
        lines.append("    </object>")
    lines.append("  </object>")
    dist = slit_distances(m)
    n = len(ids)
    lines.append(f'  <distances2 type="NUMANode" nbobjs="{n}" kind="6" name="NUMALatency" indexing="os">')
    indexes = " ".join(str(nid) for nid in ids) + " "     # the NUMANodes' os_index: the board's node ids
    values = " ".join(str(d) for row in dist for d in row) + " "
    # hwloc's "length" is the length of the text between the tags
    lines.append(f'    <indexes length="{len(indexes)}">{indexes}</indexes>')
    lines.append(f'    <u64values length="{len(values)}">{values}</u64values>')
    lines.append("  </distances2>")
    for name, flags, values, scale in (("Latency", 6, m.latency_ns, 1.0),
                                       ("Bandwidth", 5, m.node_bandwidth_GBps, 1e9 / 2**20)):
        lines.append(f'  <memattr name="{name}" flags="{flags}">')
        for a, src in enumerate(m.rows):         # from the CPUs of each node that has them
            for b, dst in enumerate(ids):
                lines.append(f'    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="{node_gp[dst]}"'
                             f' initiator_cpuset="{_hwloc_bitmap(cpus[src])}" value="{max(1, round(values[a][b] * scale))}"/>')
        lines.append("  </memattr>")
    lines.append("</topology>")
    return "\n".join(lines) + "\n"


def export(fmt: str, topology, m, memory_mb: int = 2048) -> str:
    """The text of ``fmt`` (one of :data:`EXPORTS`) for ``topology`` and its matrices ``m``."""
    if fmt == "slit":
        return _slit_text(topology, m)
    if fmt == "acpi":
        return _acpi_text(topology, m)
    if fmt == "numactl":
        return _numactl_text(topology, m, memory_mb)
    if fmt == "qemu":
        return _qemu_text(topology, m, memory_mb)
    if fmt == "hwloc":
        return _hwloc_xml(topology, m, memory_mb)
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(EXPORTS)}")
