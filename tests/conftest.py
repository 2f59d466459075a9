import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# Tests convert from scratch and write nothing under ~/.cache; the disk cache's own
# tests turn it on in the processes they start.
os.environ.setdefault("AUTOGRAPH_DISK_CACHE", "0")
