"""The disk holding a path, and its counters from /proc/diskstats (Linux): shared by the scripts that
report what the disk did during a run (server-threads, sync-probe)."""
import os

# Indexes into `counters()`: the fields after the device's name (Documentation/admin-guide/iostats).
WRITES, SECTORS_WRITTEN, FLUSHES = 4, 6, 15


def disk_of(path):
    """The /proc/diskstats name of the whole disk holding `path` (a partition's disk), or None
    (a file system with no block device of its own, such as tmpfs or overlayfs)."""
    device = os.stat(path).st_dev
    node = os.path.realpath(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    if not os.path.isdir(node):
        return None
    if os.path.exists(os.path.join(node, "partition")):
        node = os.path.dirname(node)
    return os.path.basename(node)


def counters(disk):
    """The disk's counters (the fields after its name), or None if /proc/diskstats lacks it."""
    try:
        with open("/proc/diskstats") as stats:
            for line in stats:
                fields = line.split()
                if fields[2] == disk:
                    return [int(value) for value in fields[3:]]
    except OSError:
        pass
    return None
