"""The ecosystem's formats: MLC-style matrices, exports (SLIT, ACPI, numactl, QEMU, hwloc), imports."""
