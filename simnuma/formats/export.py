"""A board and its matrices in the formats other tools read (``simnuma export FORMAT BOARD``).

* ``slit``: the ACPI System Locality Information Table as text: distance 10 for a node's own memory
  and, for memory on node j, 10 x (idle latency from i to j) / (idle latency from i to i), rounded
  half up as firmware writes it, at least 11 for another node (ACPI reserves 0-9) and at most 254
  (255 means unreachable);
* ``acpi``: the same table as ACPI source for ``iasl`` (its data-table compiler: ``iasl slit.dsl``
  makes ``slit.aml``, which a firmware or ``qemu -acpitable file=slit.aml`` loads);
* ``numactl``: what ``numactl --hardware`` prints on such a machine (CPUs numbered node by node);
* ``qemu``: options that give a virtual machine the board's NUMA layout: a memory backend and a
  ``-numa node`` per node, ``-numa cpu`` per socket, ``-numa dist`` for every pair, and the HMAT's
  ``-numa hmat-lb`` access latency (ns) and bandwidth (of every core of a node reading, in MB/s)
  with ``-machine hmat=on``;
* ``hwloc``: hwloc's v2 XML (Machine, a Package per node with its NUMANode, Cores and PUs), the
  SLIT as the ``NUMALatency`` distances matrix, and the memory attributes ``Latency`` (ns) and
  ``Bandwidth`` (MiB/s) of each node from each node's CPUs: ``lstopo --input board.xml`` shows it,
  ``hwloc-annotate``/``lstopo --memattrs`` list the attributes.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import quoteattr

__all__ = ["EXPORTS", "slit_distances", "export"]

EXPORTS = ("slit", "acpi", "numactl", "qemu", "hwloc")


def slit_distances(m) -> list:
    """The SLIT of matrices ``m`` (see the module)."""
    out = []
    for i, row in enumerate(m.latency_ns):
        local = row[i]
        line = []
        for j, lat in enumerate(row):
            if i == j:
                line.append(10)
            else:
                line.append(max(11, min(254, math.floor(10.0 * lat / local + 0.5))))
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
    oem_table = (m.board.upper().replace("-", "")[:8]).ljust(8)
    lines = [f"/* SLIT of board {m.board} ({m.board_hash}), simnuma {m.version}: compile with iasl */",
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
    lines = [f"available: {len(ids)} nodes ({ids[0]}-{ids[-1]})" if len(ids) > 1 else f"available: 1 nodes ({ids[0]})"]
    for nid in ids:
        lines += [f"node {nid} cpus: " + " ".join(map(str, cpus[nid])), f"node {nid} size: {memory_mb} MB",
                  f"node {nid} free: {memory_mb} MB"]
    lines.append("node distances:")
    lines.append("node " + "".join(f"{j:>4}" for j in ids))
    for nid, row in zip(ids, slit_distances(m)):
        lines.append(f"{nid:>3}: " + "".join(f"{d:>4}" for d in row))
    return "\n".join(lines) + "\n"


def _qemu_text(topology, m, memory_mb: int) -> str:
    ids = list(topology.node_ids)
    cores = {topology.node(nid).cores for nid in ids}
    per_socket = max(cores)
    cpus = sum(topology.node(nid).cores for nid in ids)
    opts = [f"# NUMA layout of board {m.board} ({m.board_hash}), simnuma {m.version}",
            f"-machine q35,hmat=on -smp {cpus},sockets={len(ids)},cores={per_socket},threads=1 -m {memory_mb * len(ids)}M"]
    for k, nid in enumerate(ids):
        opts.append(f"-object memory-backend-ram,id=mem{k},size={memory_mb}M")
        opts.append(f"-numa node,nodeid={k},memdev=mem{k},initiator={k}")
    for k in range(len(ids)):
        opts.append(f"-numa cpu,node-id={k},socket-id={k}")
    dist = slit_distances(m)
    for a in range(len(ids)):
        for b in range(len(ids)):
            if a != b:
                opts.append(f"-numa dist,src={a},dst={b},val={dist[a][b]}")
    for a in range(len(ids)):
        for b in range(len(ids)):
            lat = max(1, round(m.latency_ns[a][b]))
            bw = max(1, round(m.node_bandwidth_GBps[a][b] * 1000))
            opts.append(f"-numa hmat-lb,initiator={a},target={b},hierarchy=memory,data-type=access-latency,"
                        f"latency={lat}")
            opts.append(f"-numa hmat-lb,initiator={a},target={b},hierarchy=memory,data-type=access-bandwidth,"
                        f"bandwidth={bw}M")
    return "\n".join(opts) + "\n"


def _hwloc_xml(topology, m, memory_mb: int) -> str:
    cpus = _cpus(topology)
    ids = list(topology.node_ids)
    total = sum(len(c) for c in cpus.values())

    def mask(bits) -> str:
        value = sum(1 << b for b in bits)
        return f"0x{value:08x}"

    all_cpus = mask(range(total))
    all_nodes = mask(range(len(ids)))
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
    for k, nid in enumerate(ids):
        cs = mask(cpus[nid])
        ns = mask([k])
        lines.append(f'    <object type="Package" os_index="{k}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}"'
                     f' complete_nodeset="{ns}" gp_index="{next(gp)}">')
        node_gp[nid] = next(gp)
        lines.append(f'      <object type="NUMANode" os_index="{k}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}"'
                     f' complete_nodeset="{ns}" gp_index="{node_gp[nid]}" local_memory="{memory_mb * 2**20}"/>')
        for cpu in cpus[nid]:
            c = mask([cpu])
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
    indexes = " ".join(str(k) for k in range(n)) + " "
    values = " ".join(str(d) for row in dist for d in row) + " "
    # hwloc's "length" is the length of the text between the tags
    lines.append(f'    <indexes length="{len(indexes)}">{indexes}</indexes>')
    lines.append(f'    <u64values length="{len(values)}">{values}</u64values>')
    lines.append("  </distances2>")
    for name, flags, values, scale in (("Latency", 6, m.latency_ns, 1.0),
                                       ("Bandwidth", 5, m.node_bandwidth_GBps, 1e9 / 2**20)):
        lines.append(f'  <memattr name="{name}" flags="{flags}">')
        for a, src in enumerate(ids):
            for b, dst in enumerate(ids):
                lines.append(f'    <memattr_value target_obj_type="NUMANode" target_obj_gp_index="{node_gp[dst]}"'
                             f' initiator_cpuset="{mask(cpus[src])}" value="{max(1, round(values[a][b] * scale))}"/>')
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
